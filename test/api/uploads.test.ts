import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import S3rver from 's3rver'
import { files, users, workspaces } from '../../server/db/schema/index.ts'
import { deleteStoredFiles } from '../../server/modules/files/service.ts'
import { addMember, workspaceFixture, type WorkspaceFixture } from '../helpers/fixtures.ts'
import { BASE, startHarness, type Harness, type TestClient } from '../helpers/harness.ts'
import { gif, ico, jpeg, png, polyglot, svg, webp } from '../helpers/images.ts'
import { lastOutboxMail, signIn } from '../helpers/session.ts'

const form = (bytes: Uint8Array<ArrayBuffer>, name = 'image.png', type = 'application/octet-stream', field = 'file') => {
  const data = new FormData()
  data.append(field, new File([bytes], name, { type }))
  return data
}

/** The exact bytes and Content-Type a browser would send for `data`. */
async function encoded(data: FormData) {
  const request = new Request('http://localhost/', { method: 'POST', body: data })
  return { contentType: request.headers.get('content-type')!, bytes: new Uint8Array(await request.arrayBuffer()) }
}

const upload = (client: TestClient, path: string, data: FormData | BodyInit, headers: Record<string, string> = {}) => client.call('POST', path, { raw: data, headers })

/** Fetches a served file URL (absolute, on BASE) through the app. */
async function fetchFile(h: Harness, url: string) {
  expect(url.startsWith(`${BASE}/files/`)).toBe(true)
  const response = await h.app.handle(new Request(url))
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}

let h: Harness
let dataDir: string
const storedNames = async () => (await readdir(join(dataDir, 'files')).catch(() => [] as string[])).sort()
const fileRows = () => h.db.select().from(files)

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'chorus-uploads-'))
  h = await startHarness({ DATA_DIR: dataDir })
}, 60_000)
afterAll(async () => {
  await h.close()
  await rm(dataDir, { recursive: true, force: true })
})

describe('happy', () => {
  test('an avatar is stored under a random name and served with its detected type and safe headers', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'avatar@example.com')
    const bytes = png()
    const res = await upload(client, '/api/v1/user/profile/avatar', form(bytes, 'me.png', 'image/png'))
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: user.id, email: 'avatar@example.com' })
    expect(res.body.avatar_url).toMatch(/^http:\/\/localhost:3000\/files\/file_[0-9a-z]{25}$/)

    const fileId = res.body.avatar_url.split('/').pop()
    const [row] = await h.db.select().from(files).where(eq(files.id, fileId))
    expect(row).toMatchObject({ purpose: 'avatar', contentType: 'image/png', size: bytes.length, userId: user.id, workspaceId: null })
    // The key is the random file id, never derived from the uploader's file name.
    expect(row!.key).toBe(fileId)
    expect(row!.key).not.toContain('me.png')
    expect(await storedNames()).toContain(row!.key)
    const [owner] = await h.db.select().from(users).where(eq(users.id, user.id))
    expect(owner!.avatarFileId).toBe(fileId)

    const served = await fetchFile(h, res.body.avatar_url)
    expect(served.status).toBe(200)
    expect(served.bytes).toEqual(bytes)
    expect(served.headers.get('content-type')).toBe('image/png')
    expect(served.headers.get('x-content-type-options')).toBe('nosniff')
    expect(served.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox")
    expect(served.headers.get('cross-origin-resource-policy')).toBe('cross-origin')
    expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')

    expect((await client.get('/api/v1/user/profile')).body.avatar_url).toBe(res.body.avatar_url)
  })

  test('logos in PNG, JPEG, GIF and WebP and favicons in PNG and ICO are accepted by their bytes', async () => {
    const ws = await workspaceFixture(h)
    const cases: [string, Uint8Array<ArrayBuffer>, string][] = [
      ['logo', png(), 'image/png'], ['logo', jpeg(), 'image/jpeg'], ['logo', gif(), 'image/gif'], ['logo', webp(), 'image/webp'],
      ['favicon', png(), 'image/png'], ['favicon', ico(), 'image/x-icon'],
    ]
    for (const [slot, bytes, type] of cases) {
      const res = await upload(ws.owner, `/api/v1/workspaces/${ws.slug}/${slot}`, form(bytes, 'upload.bin'))
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ id: ws.id, slug: ws.slug, role: 'owner' })
      const served = await fetchFile(h, res.body[`${slot}_url`])
      expect(served.headers.get('content-type')).toBe(type)
      expect(served.bytes).toEqual(bytes)
    }
    // Each slot kept only its latest file.
    const rows = await h.db.select().from(files).where(eq(files.workspaceId, ws.id))
    expect(rows.map((row) => `${row.purpose}:${row.contentType}`).sort()).toEqual(['favicon:image/x-icon', 'logo:image/webp'])
  })

  test('a PNG named .jpg and declared image/jpeg is stored and served as PNG', async () => {
    const ws = await workspaceFixture(h)
    const res = await upload(ws.owner, `/api/v1/workspaces/${ws.slug}/logo`, form(png(), 'photo.jpg', 'image/jpeg'))
    expect(res.status).toBe(200)
    const [row] = await h.db.select().from(files).where(eq(files.workspaceId, ws.id))
    expect(row!.contentType).toBe('image/png')
    expect((await fetchFile(h, res.body.logo_url)).headers.get('content-type')).toBe('image/png')
  })

  test('replacing deletes the previous file and its row; removing the avatar deletes it too', async () => {
    const client = h.client()
    const user = await signIn(h, client, 'replace@example.com')
    const first = await upload(client, '/api/v1/user/profile/avatar', form(png()))
    const firstId = first.body.avatar_url.split('/').pop()
    const [firstRow] = await h.db.select().from(files).where(eq(files.id, firstId))
    const second = await upload(client, '/api/v1/user/profile/avatar', form(gif()))
    expect(second.status).toBe(200)
    expect(second.body.avatar_url).not.toBe(first.body.avatar_url)

    expect((await fetchFile(h, first.body.avatar_url)).status).toBe(404)
    expect(await storedNames()).not.toContain(firstRow!.key)
    const rows = await h.db.select().from(files).where(eq(files.userId, user.id))
    expect(rows.map((row) => row.id)).toEqual([second.body.avatar_url.split('/').pop()])

    const removed = await client.delete('/api/v1/user/profile/avatar')
    expect(removed.status).toBe(200)
    expect(removed.body.avatar_url).toBeNull()
    expect(await h.db.select().from(files).where(eq(files.userId, user.id))).toEqual([])
    expect(await storedNames()).not.toContain(rows[0]!.key)
    expect((await fetchFile(h, second.body.avatar_url)).status).toBe(404)
    // Removing an absent avatar is a no-op.
    expect((await client.delete('/api/v1/user/profile/avatar')).body.avatar_url).toBeNull()
  })

  test('Idempotency-Key: the same file replays, another file under the same key is refused', async () => {
    const ws = await workspaceFixture(h)
    const path = `/api/v1/workspaces/${ws.slug}/logo`
    const first = await upload(ws.owner, path, form(png()), { 'idempotency-key': 'logo-1' })
    expect(first.status).toBe(200)
    const again = await upload(ws.owner, path, form(png()), { 'idempotency-key': 'logo-1' })
    expect(again.status).toBe(200)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body.logo_url).toBe(first.body.logo_url)
    const other = await upload(ws.owner, path, form(gif()), { 'idempotency-key': 'logo-1' })
    expect(other.status).toBe(422)
    expect(other.body.code).toBe('IDEMPOTENCY_MISMATCH')
    const rows = await h.db.select().from(files).where(eq(files.workspaceId, ws.id))
    expect(rows.map((row) => row.contentType)).toEqual(['image/png'])
  })

  test('the public workspace read and the workspace e-mails show the logo', async () => {
    const ws = await workspaceFixture(h)
    const logo = await upload(ws.owner, `/api/v1/workspaces/${ws.slug}/logo`, form(png()))
    const favicon = await upload(ws.owner, `/api/v1/workspaces/${ws.slug}/favicon`, form(ico()))
    const pub = await h.client().get(`/api/v1/public/${ws.slug}`)
    expect(pub.status).toBe(200)
    expect(pub.body.workspace.logo_url).toBe(logo.body.logo_url)
    expect(pub.body.workspace.favicon_url).toBe(favicon.body.favicon_url)

    const invited = `invitee-${ws.slug}@example.com`
    expect((await ws.owner.post(`/api/v1/workspaces/${ws.slug}/members`, { email: invited, role: 'member' })).status).toBe(201)
    const mail = await lastOutboxMail(h, invited)
    expect(mail.html).toContain(`<img src="${logo.body.logo_url}" alt="Workspace ${ws.slug}"`)
    expect(mail.html).toContain('Accept within 7 days')
    expect(mail.text).not.toContain('<img')
  })

  test('deleteStoredFiles removes the objects and rows of a workspace; deleting it then leaves nothing', async () => {
    const ws = await workspaceFixture(h)
    const logo = await upload(ws.owner, `/api/v1/workspaces/${ws.slug}/logo`, form(png()))
    const [row] = await h.db.select().from(files).where(eq(files.workspaceId, ws.id))
    expect(await storedNames()).toContain(row!.key)
    expect(await deleteStoredFiles(h.ctx, { workspaceId: ws.id })).toBe(1)
    expect(await storedNames()).not.toContain(row!.key)
    expect(await h.db.select().from(files).where(eq(files.workspaceId, ws.id))).toEqual([])
    const [after] = await h.db.select().from(workspaces).where(eq(workspaces.id, ws.id))
    expect(after!.logoFileId).toBeNull()
    expect((await fetchFile(h, logo.body.logo_url)).status).toBe(404)
  })

  test('deleting a workspace or user with files cascades to their rows', async () => {
    const ws = await workspaceFixture(h)
    await upload(ws.owner, `/api/v1/workspaces/${ws.slug}/logo`, form(png()))
    await upload(ws.owner, '/api/v1/user/profile/avatar', form(png()))
    expect((await ws.owner.delete(`/api/v1/workspaces/${ws.slug}`)).status).toBe(200)
    expect(await h.db.select().from(files).where(eq(files.workspaceId, ws.id))).toEqual([])
    await h.db.delete(users).where(eq(users.id, ws.ownerId))
    expect(await h.db.select().from(files).where(eq(files.userId, ws.ownerId))).toEqual([])
  })
})

describe('errors', () => {
  let ws: WorkspaceFixture
  beforeAll(async () => (ws = await workspaceFixture(h)))
  const logoPath = () => `/api/v1/workspaces/${ws.slug}/logo`

  async function expectNothingStored(run: () => Promise<{ status: number; body: any }>, status: number, code: string) {
    const before = { names: await storedNames(), rows: (await fileRows()).length }
    const res = await run()
    expect(res.status).toBe(status)
    expect(res.body).toMatchObject({ code, request_id: expect.any(String) })
    expect(await storedNames()).toEqual(before.names)
    expect((await fileRows()).length).toBe(before.rows)
  }

  test('SVG, text, an empty file and a JPEG favicon are 415', async () => {
    await expectNothingStored(() => upload(ws.owner, logoPath(), form(svg(), 'logo.png', 'image/png')), 415, 'UNSUPPORTED_MEDIA_TYPE')
    await expectNothingStored(() => upload(ws.owner, logoPath(), form(new TextEncoder().encode('hello'), 'logo.gif', 'image/gif')), 415, 'UNSUPPORTED_MEDIA_TYPE')
    await expectNothingStored(() => upload(ws.owner, logoPath(), form(new Uint8Array())), 415, 'UNSUPPORTED_MEDIA_TYPE')
    await expectNothingStored(() => upload(ws.owner, `/api/v1/workspaces/${ws.slug}/favicon`, form(jpeg(), 'favicon.ico', 'image/x-icon')), 415, 'UNSUPPORTED_MEDIA_TYPE')
  })

  test('a JSON body is 415; a body without the file field or with a text field is 422', async () => {
    await expectNothingStored(() => ws.owner.post(logoPath(), { file: 'iVBORw0KGgo=' }), 415, 'UNSUPPORTED_MEDIA_TYPE')
    await expectNothingStored(() => upload(ws.owner, logoPath(), form(png(), 'a.png', 'image/png', 'image')), 422, 'VALIDATION_ERROR')
    const text = new FormData()
    text.append('file', 'not a file')
    await expectNothingStored(() => upload(ws.owner, logoPath(), text), 422, 'VALIDATION_ERROR')
    const extra = form(png())
    extra.append('note', 'hi')
    await expectNothingStored(() => upload(ws.owner, logoPath(), extra), 422, 'VALIDATION_ERROR')
  })

  test('a truncated multipart body is 400', async () => {
    const { contentType, bytes } = await encoded(form(png()))
    await expectNothingStored(() => upload(ws.owner, logoPath(), bytes.slice(0, bytes.length - 20), { 'content-type': contentType }), 400, 'BAD_REQUEST')
    await expectNothingStored(() => upload(ws.owner, logoPath(), 'garbage', { 'content-type': 'multipart/form-data; boundary=x' }), 400, 'BAD_REQUEST')
  })

  test('oversized uploads are 413, by Content-Length or while streaming, before the body is buffered', async () => {
    const big = new Uint8Array(2 * 1024 * 1024 + 1)
    big.set(png())
    // Declared length over the limit: refused before reading.
    await expectNothingStored(() => upload(ws.owner, logoPath(), form(big)), 413, 'PAYLOAD_TOO_LARGE')

    // No Content-Length: the stream is cut once it passes the limit; the producer is never drained.
    const { contentType, bytes } = await encoded(form(new Uint8Array(8 * 1024 * 1024)))
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= bytes.length) return controller.close()
        const chunk = bytes.subarray(sent, sent + 64 * 1024)
        sent += chunk.length
        controller.enqueue(chunk)
      },
    })
    await expectNothingStored(() => upload(ws.owner, logoPath(), stream, { 'content-type': contentType }), 413, 'PAYLOAD_TOO_LARGE')
    expect(sent).toBeLessThan(3 * 1024 * 1024)

    // A favicon has its own, smaller limit (just over 512 KiB, inside the framing allowance).
    const favicon = new Uint8Array(512 * 1024 + 10)
    favicon.set(png())
    await expectNothingStored(() => upload(ws.owner, `/api/v1/workspaces/${ws.slug}/favicon`, form(favicon)), 413, 'PAYLOAD_TOO_LARGE')
    // A 2 MiB avatar just over the limit but inside the framing allowance: 413 from the size check.
    await expectNothingStored(() => upload(ws.owner, '/api/v1/user/profile/avatar', form(big.subarray(0, 2 * 1024 * 1024 + 100))), 413, 'PAYLOAD_TOO_LARGE')
  })

  test('unknown and malformed file ids are 404', async () => {
    for (const id of ['file_0000000000000000000000000', 'nope', '..%2F..%2Fsecret.key']) {
      const res = await h.app.handle(new Request(`${BASE}/files/${id}`))
      expect(res.status).toBe(404)
      expect((await res.json()).code).toBe('NOT_FOUND')
    }
  })
})

describe('security', () => {
  test('a GIF-headed HTML polyglot is stored as GIF and served with nosniff and a sandboxing CSP', async () => {
    const ws = await workspaceFixture(h)
    const res = await upload(ws.owner, `/api/v1/workspaces/${ws.slug}/logo`, form(polyglot(), 'page.html', 'text/html'))
    expect(res.status).toBe(200)
    const served = await fetchFile(h, res.body.logo_url)
    expect(served.headers.get('content-type')).toBe('image/gif')
    expect(served.headers.get('x-content-type-options')).toBe('nosniff')
    expect(served.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox")
  })

  test('a member (not admin) cannot set the logo; an admin can', async () => {
    const ws = await workspaceFixture(h)
    const member = await addMember(h, ws, `member-${ws.slug}@example.com`, 'member')
    const refused = await upload(member.client, `/api/v1/workspaces/${ws.slug}/logo`, form(png()))
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe('FORBIDDEN')
    expect(await h.db.select().from(files).where(eq(files.workspaceId, ws.id))).toEqual([])
    const admin = await addMember(h, ws, `admin-${ws.slug}@example.com`, 'admin')
    const accepted = await upload(admin.client, `/api/v1/workspaces/${ws.slug}/favicon`, form(png()))
    expect(accepted.status).toBe(200)
    expect(accepted.body.role).toBe('admin')
  })

  test('API keys are refused (dashboard only); no credential is 401; a foreign workspace is 404', async () => {
    const ws = await workspaceFixture(h)
    const key = await ws.key()
    const anon = h.client()
    for (const path of [`/api/v1/workspaces/${ws.slug}/logo`, `/api/v1/workspaces/${ws.slug}/favicon`, '/api/v1/user/profile/avatar']) {
      const keyed = await upload(anon, path, form(png()), { authorization: `Bearer ${key}` })
      expect(keyed.status).toBe(403)
      expect(keyed.body.code).toBe('DASHBOARD_ONLY')
    }
    // A key next to a session cookie makes it a key request.
    const mixed = await upload(ws.owner, `/api/v1/workspaces/${ws.slug}/logo`, form(png()), { 'x-api-key': key })
    expect(mixed.status).toBe(403)
    expect((await upload(anon, `/api/v1/workspaces/${ws.slug}/logo`, form(png()))).status).toBe(401)
    expect((await anon.delete('/api/v1/user/profile/avatar')).status).toBe(401)

    const other = await workspaceFixture(h)
    const foreign = await upload(other.owner, `/api/v1/workspaces/${ws.slug}/logo`, form(png()))
    expect(foreign.status).toBe(404)
    expect(await h.db.select().from(files).where(eq(files.workspaceId, ws.id))).toEqual([])
  })
})

describe('S3 storage', () => {
  let s3: S3rver
  let s3Dir: string
  let hs: Harness
  let bucket: Bun.S3Client
  beforeAll(async () => {
    s3Dir = await mkdtemp(join(tmpdir(), 'chorus-s3rver-'))
    s3 = new S3rver({ port: 0, address: '127.0.0.1', directory: s3Dir, silent: true, configureBuckets: [{ name: 'chorus-files', configs: [] }] })
    const { port } = await s3.run()
    const env = { S3_BUCKET: 'chorus-files', S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_REGION: 'us-east-1', S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER' }
    hs = await startHarness({ ...env, DATA_DIR: s3Dir })
    bucket = new Bun.S3Client({ bucket: env.S3_BUCKET, endpoint: env.S3_ENDPOINT, region: env.S3_REGION, accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY })
  }, 60_000)
  afterAll(async () => {
    await hs.close()
    await s3.close()
    await rm(s3Dir, { recursive: true, force: true })
  })

  test('uploads go to the bucket, are served from it, and a replaced one is deleted from it', async () => {
    expect(hs.ctx.storage.kind).toBe('s3')
    const ws = await workspaceFixture(hs)
    const first = await upload(ws.owner, `/api/v1/workspaces/${ws.slug}/logo`, form(jpeg(), 'logo.png', 'image/png'))
    expect(first.status).toBe(200)
    const [firstRow] = await hs.db.select().from(files).where(eq(files.workspaceId, ws.id))
    expect(await bucket.exists(firstRow!.key)).toBe(true)
    expect(new Uint8Array(await bucket.file(firstRow!.key).arrayBuffer())).toEqual(jpeg())

    const served = await fetchFile(hs, first.body.logo_url)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toBe('image/jpeg')
    expect(served.bytes).toEqual(jpeg())

    const second = await upload(ws.owner, `/api/v1/workspaces/${ws.slug}/logo`, form(webp()))
    expect(second.status).toBe(200)
    expect(await bucket.exists(firstRow!.key)).toBe(false)
    expect((await fetchFile(hs, first.body.logo_url)).status).toBe(404)
    const [secondRow] = await hs.db.select().from(files).where(eq(files.workspaceId, ws.id))
    expect(await bucket.exists(secondRow!.key)).toBe(true)

    expect(await deleteStoredFiles(hs.ctx, { workspaceId: ws.id })).toBe(1)
    expect(await bucket.exists(secondRow!.key)).toBe(false)
  })

  test('an oversized upload leaves the bucket untouched', async () => {
    const ws = await workspaceFixture(hs)
    const big = new Uint8Array(2 * 1024 * 1024 + 100)
    big.set(png())
    const res = await upload(ws.owner, '/api/v1/user/profile/avatar', form(big))
    expect(res.status).toBe(413)
    expect(await hs.db.select().from(files).where(eq(files.userId, ws.ownerId))).toEqual([])
  })
})
