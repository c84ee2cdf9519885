import { S3Client } from 'bun'
import { mkdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Config } from '../config.ts'

/**
 * Where uploaded files live: a directory under DATA_DIR, or an S3-compatible bucket when S3_* is set.
 * Keys are chosen by the server (random, `[a-z0-9_]`), never by the uploader.
 */
export interface Storage {
  readonly kind: 'disk' | 's3'
  put(key: string, data: Uint8Array, contentType: string): Promise<void>
  /** The stored bytes (a disk file is streamed by Bun), or null when nothing is stored under `key`. */
  get(key: string): Promise<Blob | Uint8Array<ArrayBuffer> | null>
  /** Removes the object; removing a missing one is not an error. */
  delete(key: string): Promise<void>
  /** Stores the local file at `path` under `key` without reading it into memory (imports of up to 100 MB), then removes `path`. */
  putFile(key: string, path: string, contentType: string): Promise<void>
  /** The stored bytes as a stream (read as they are needed), or null when nothing is stored under `key`. */
  stream(key: string): Promise<ReadableStream<Uint8Array> | null>
}

const KEY = /^[a-z0-9_]{1,64}$/

function checked(key: string): string {
  // Keys come from our own rows; the check keeps a bug from ever turning into a path outside the directory.
  if (!KEY.test(key)) throw new Error(`invalid storage key ${JSON.stringify(key)}`)
  return key
}

export function diskStorage(directory: string): Storage {
  const path = (key: string) => join(directory, checked(key))
  let ready: Promise<unknown> | undefined
  return {
    kind: 'disk',
    async put(key, data) {
      await (ready ??= mkdir(directory, { recursive: true }))
      await Bun.write(path(key), data)
    },
    async get(key) {
      const file = Bun.file(path(key))
      return (await file.exists()) ? file : null
    },
    async delete(key) {
      await rm(path(key), { force: true })
    },
    async putFile(key, from) {
      await (ready ??= mkdir(directory, { recursive: true }))
      // Within one file system a rename; across two, a streamed copy.
      await rename(from, path(key)).catch(async () => {
        await Bun.write(path(key), Bun.file(from))
        await rm(from, { force: true })
      })
    },
    async stream(key) {
      const file = Bun.file(path(key))
      return (await file.exists()) ? file.stream() : null
    },
  }
}

export function s3Storage(config: NonNullable<Config['s3']>): Storage {
  const client = new S3Client({
    bucket: config.bucket,
    endpoint: config.endpoint,
    region: config.region,
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
  })
  return {
    kind: 's3',
    async put(key, data, contentType) {
      await client.write(checked(key), data, { type: contentType })
    },
    async get(key) {
      try {
        // Files are at most 2 MiB: one GET, read whole, is simpler and cheaper than HEAD + streamed GET.
        return new Uint8Array(await client.file(checked(key)).arrayBuffer())
      } catch (error) {
        if ((error as { code?: string }).code === 'NoSuchKey') return null
        throw error
      }
    },
    async delete(key) {
      await client.delete(checked(key))
    },
    async putFile(key, from, contentType) {
      // Bun uploads a file of any size in parts, reading it as it goes.
      await client.write(checked(key), Bun.file(from), { type: contentType })
      await rm(from, { force: true })
    },
    async stream(key) {
      const file = client.file(checked(key))
      return (await file.exists()) ? file.stream() : null
    },
  }
}

export function createStorage(config: Config): Storage {
  return config.s3 ? s3Storage(config.s3) : diskStorage(join(config.dataDir, 'files'))
}
