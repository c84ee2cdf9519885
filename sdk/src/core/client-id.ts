import { VERSION } from '../version.js'

interface RuntimeGlobals {
  Bun?: { version: string }
  Deno?: { version?: { deno?: string } }
  process?: { versions?: { node?: string } }
  navigator?: { userAgent?: string }
  document?: unknown
}

/** `bun/1.2.3`, `deno/2.0.0`, `node/22.1.0`, or what an edge runtime calls itself in `navigator.userAgent`. */
function runtime(scope: RuntimeGlobals): string {
  if (scope.Bun?.version) return `bun/${scope.Bun.version}`
  if (scope.Deno?.version?.deno) return `deno/${scope.Deno.version.deno}`
  if (scope.process?.versions?.node) return `node/${scope.process.versions.node}`
  if (scope.navigator?.userAgent) return scope.navigator.userAgent
  return 'unknown'
}

/**
 * The header that names this SDK to the server: `User-Agent: chorus-sdk/<version> (<runtime>/<version>)`.
 * Browsers own their User-Agent (some refuse to let scripts set it), so a page sends `X-Chorus-Client` instead.
 */
export function clientHeader(scope: RuntimeGlobals = globalThis as RuntimeGlobals): [name: string, value: string] {
  if (scope.document !== undefined && !scope.Deno) return ['x-chorus-client', `chorus-sdk/${VERSION} (browser)`]
  return ['user-agent', `chorus-sdk/${VERSION} (${runtime(scope)})`]
}
