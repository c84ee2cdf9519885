import { SCOPES } from '../../plugins/auth.ts'
import { DEFAULT_SCOPES } from './model.ts'
import { OAuthError } from './errors.ts'

const KNOWN = new Set<string>(SCOPES)

/** A space-separated `scope` parameter as a list of known scopes (the read scopes when absent). */
export function parseScope(raw: string | undefined | null, error = 'invalid_scope'): string[] {
  if (raw === undefined || raw === null || raw.trim() === '') return DEFAULT_SCOPES
  const scopes = [...new Set(raw.trim().split(/\s+/))]
  const unknown = scopes.filter((scope) => !KNOWN.has(scope))
  if (unknown.length) throw new OAuthError(error, `Unknown scope: ${unknown.join(' ')}`)
  return scopes
}
