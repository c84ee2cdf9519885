// Writes one section of BENCHMARKS.md, replacing the previous run of the same benchmark, with the machine described.
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
