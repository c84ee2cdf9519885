// Writes one section of BENCHMARKS.md, replacing the previous run of the same benchmark, with the machine
// described; and runs a round's pair of servers in the order that keeps rounds comparable.
const FILE = new URL('../BENCHMARKS.md', import.meta.url)

async function machine() {
  const cpu = (await Bun.file('/proc/cpuinfo').text()).match(/model name\s*:\s*(.+)/)?.[1] ?? 'unknown CPU'
  const memory = Number((await Bun.file('/proc/meminfo').text()).match(/MemTotal:\s+(\d+)/)?.[1]) / 1024 / 1024
  return `${navigator.hardwareConcurrency} cores (${cpu}), ${memory.toFixed(0)} GiB RAM, Bun ${Bun.version}, ${new Date().toISOString().slice(0, 10)}`
}

export async function writeSection(title: string, lines: string[]) {
  const file = Bun.file(FILE)
  const current = (await file.exists()) ? await file.text() : '# Benchmarks\n\nRun with `npm run bench:http` and `npm run bench:webhooks`; each run rewrites its own section.\n'
  const section = `## ${title}\n\nMachine: ${await machine()}.\n\n${lines.join('\n')}\n`
  const pattern = new RegExp(`## ${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n[\\s\\S]*?(?=\\n## |$)`)
  const next = pattern.test(current) ? current.replace(pattern, section.trimEnd() + '\n') : `${current.trimEnd()}\n\n${section}`
  await Bun.write(FILE, next)
}

/** How a round's order is described in the sections. */
export const PAIR_ORDER = 'one server then the other (raw first in odd rounds, Chorus first in even ones)'

/**
 * One round's pair, raw first in odd rounds (`round` counts from 0) and Chorus first in even ones, so a
 * machine that drifts faster or slower within a round favours neither across the rounds.
 */
export async function runPair<R, C>(round: number, raw: () => Promise<R>, chorus: () => Promise<C>): Promise<{ raw: R; chorus: C }> {
  if (round % 2 === 0) {
    const first = await raw()
    return { raw: first, chorus: await chorus() }
  }
  const first = await chorus()
  return { raw: await raw(), chorus: first }
}
