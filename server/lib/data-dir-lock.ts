import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'

// The embedded database (PGlite) allows one process: a second one opening the same directory
// corrupts it. An exclusive lock file names the holder; web APIs have no file locks, hence node:fs.

export interface LockHolder {
  pid: number
  role: string
  host: string
  started_at: string
}

export class DataDirLocked extends Error {
  constructor(readonly dir: string, readonly holder: LockHolder) {
    super(`${dir} is in use by the chorus ${holder.role} (pid ${holder.pid} on ${holder.host}, since ${holder.started_at})`)
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function readHolder(file: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockHolder
  } catch {
    return undefined
  }
}

/**
 * Takes `dir/chorus.lock` for this process until it exits, or throws DataDirLocked naming the
 * holder. A lock left by a process that is gone (kill -9, power loss) is taken over.
 */
export function lockDataDir(dir: string, role: string): () => void {
  const file = `${dir}/chorus.lock`
  const me: LockHolder = { pid: process.pid, role, host: hostname(), started_at: new Date().toISOString() }
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number
    try {
      fd = openSync(file, 'wx', 0o600)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = readHolder(file)
      // A holder on another host (a shared volume) cannot be checked: it is trusted.
      if (holder && (holder.host !== me.host || alive(holder.pid)) && holder.pid !== process.pid) throw new DataDirLocked(dir, holder)
      try {
        unlinkSync(file)
      } catch {}
      continue
    }
    writeSync(fd, JSON.stringify(me))
    closeSync(fd)
    let released = false
    const release = () => {
      if (released) return
      released = true
      if (readHolder(file)?.pid === process.pid) unlinkSync(file)
    }
    process.once('exit', release)
    return release
  }
  const holder = readHolder(file)
  throw new DataDirLocked(dir, holder ?? { pid: 0, role: 'unknown', host: me.host, started_at: '' })
}
