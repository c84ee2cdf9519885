// Every benchmark's throwaway database: created on the PostgreSQL at BENCH_POSTGRES_URL, dropped at the end.
import postgres from 'postgres'

export const BENCH_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** A fresh database named `${prefix}_<time>`; `drop()` removes it (with its connections) and closes the admin connection. */
export async function benchDatabase(prefix: string) {
  const admin = postgres(BENCH_ADMIN_URL, { max: 1, onnotice: () => {} })
  const name = `${prefix}_${Date.now().toString(36)}`
  await admin.unsafe(`create database ${name}`)
  const url = new URL(BENCH_ADMIN_URL)
  url.pathname = `/${name}`
  return {
    name,
    url: url.toString(),
    /** A connection to the server's maintenance database, for watching the benchmark's database from outside. */
    admin,
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`)
      await admin.end()
    },
  }
}
