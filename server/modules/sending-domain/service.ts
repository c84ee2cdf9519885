// A workspace's own sending domain: the DNS records it must publish (SPF, DKIM with a key generated
// here, a return-path CNAME), checked through the configured resolver until all are found.
import { eq, sql } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { sendingDomains } from '../../db/schema/index.ts'
import { ApiError, conflict, notFound } from '../../errors.ts'
import { randomBase62, sealContext, type Sealer } from '../../lib/secrets.ts'
import type { Dns } from '../../lib/dns.ts'
import type { Workspace } from '../../plugins/credentials.ts'

type DomainRow = typeof sendingDomains.$inferSelect
type Purpose = 'spf' | 'dkim' | 'return_path'

export interface DomainDeps {
  db: Db
  dns: Dns
  secrets: Sealer
  /** The service's own mail host (BASE_URL's host name): SPF includes and the return path point there. */
  mailHost: string
}

export const FROM_LOCAL_PART = 'notifications'

export function requireBusiness(workspace: Workspace) {
  if (workspace.plan !== 'business') throw new ApiError('PLAN_REQUIRED', 'A custom sending domain needs the Business plan')
}

const pem = (der: ArrayBuffer) => `-----BEGIN PRIVATE KEY-----\n${Buffer.from(der).toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`

async function generateDkimKey() {
  const pair = await crypto.subtle.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign', 'verify'])
  return {
    publicKey: Buffer.from(await crypto.subtle.exportKey('spki', pair.publicKey)).toString('base64'),
    privateKeyPem: pem(await crypto.subtle.exportKey('pkcs8', pair.privateKey)),
  }
}

export function expectedRecords(row: Pick<DomainRow, 'domain' | 'dkimSelector' | 'dkimPublicKey'>, mailHost: string) {
  return [
    { purpose: 'spf' as Purpose, type: 'TXT' as const, name: row.domain, value: `v=spf1 include:_spf.${mailHost} ~all` },
    { purpose: 'dkim' as Purpose, type: 'TXT' as const, name: `${row.dkimSelector}._domainkey.${row.domain}`, value: `v=DKIM1; k=rsa; p=${row.dkimPublicKey}` },
    { purpose: 'return_path' as Purpose, type: 'CNAME' as const, name: `bounces.${row.domain}`, value: `bounces.${mailHost}` },
  ]
}

const squash = (value: string) => value.replace(/\s+/g, '').toLowerCase()
const bareName = (name: string) => name.toLowerCase().replace(/\.$/, '')

/** Which of the records DNS shows now; lookups that fail count as not found. */
async function lookRecords(deps: DomainDeps, row: DomainRow): Promise<Record<Purpose, boolean>> {
  const [spf, dkim, cname] = await Promise.all([
    deps.dns.txt(row.domain).catch(() => []),
    deps.dns.txt(`${row.dkimSelector}._domainkey.${row.domain}`).catch(() => []),
    deps.dns.cname(`bounces.${row.domain}`).catch(() => []),
  ])
  return {
    spf: spf.some((text) => /^v=spf1\s/i.test(text) && text.toLowerCase().split(/\s+/).includes(`include:_spf.${deps.mailHost}`)),
    // A key is longer than one 255-byte TXT string; some resolvers hand the strings back as separate entries.
    dkim: [...dkim, dkim.join('')].some((text) => squash(text).includes(squash(`p=${row.dkimPublicKey}`)) && /(^|;)\s*v=DKIM1/i.test(text)),
    return_path: cname.some((target) => bareName(target) === `bounces.${deps.mailHost}`),
  }
}

export function toDomainResponse(row: DomainRow, mailHost: string, found: Record<Purpose, boolean> | null) {
  return {
    domain: row.domain,
    status: row.status,
    from_address: `${FROM_LOCAL_PART}@${row.domain}`,
    records: expectedRecords(row, mailHost).map((record) => ({ ...record, verified: row.status === 'verified' || (found?.[record.purpose] ?? false) })),
    verified_at: row.verifiedAt?.toISOString() ?? null,
    last_checked_at: row.lastCheckedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  }
}

export async function createDomain(deps: DomainDeps, workspace: Workspace, domain: string) {
  requireBusiness(workspace)
  const { publicKey, privateKeyPem } = await generateDkimKey()
  const [row] = await deps.db.insert(sendingDomains).values({
    workspaceId: workspace.id,
    domain: domain.toLowerCase(),
    dkimSelector: `chorus${randomBase62(6).toLowerCase()}`,
    dkimPublicKey: publicKey,
    dkimPrivateKey: await deps.secrets.seal(privateKeyPem, sealContext.dkimPrivateKey(workspace.id)),
  }).onConflictDoNothing().returning()
  // Either this workspace has one already, or another workspace uses the domain: both are conflicts.
  if (!row) throw conflict('This workspace already has a sending domain, or the domain is in use; delete the existing one first')
  return row
}

async function findDomain(db: Db, workspaceId: string) {
  const [row] = await db.select().from(sendingDomains).where(eq(sendingDomains.workspaceId, workspaceId))
  if (!row) throw notFound('Sending domain')
  return row
}

/** The domain with a fresh DNS check while it is pending; verified stays verified. */
export async function getDomain(deps: DomainDeps, workspace: Workspace) {
  requireBusiness(workspace)
  const row = await findDomain(deps.db, workspace.id)
  if (row.status === 'verified') return { row, found: null }
  const found = await lookRecords(deps, row)
  const verified = found.spf && found.dkim && found.return_path
  const [updated] = await deps.db.update(sendingDomains)
    .set({ lastCheckedAt: sql`now()`, ...(verified ? { status: 'verified' as const, verifiedAt: sql`now()` } : {}) })
    .where(eq(sendingDomains.workspaceId, workspace.id)).returning()
  return { row: updated!, found }
}

export async function deleteDomain(db: Db, workspace: Workspace) {
  requireBusiness(workspace)
  const [row] = await db.delete(sendingDomains).where(eq(sendingDomains.workspaceId, workspace.id)).returning({ domain: sendingDomains.domain })
  if (!row) throw notFound('Sending domain')
}

/** What mail from this workspace is sent as: its verified domain, DKIM-signed; null when it has none. */
export async function senderFor(db: Db, secrets: Sealer, workspaceId: string, workspaceName: string) {
  const [row] = await db.select().from(sendingDomains).where(eq(sendingDomains.workspaceId, workspaceId))
  if (!row || row.status !== 'verified') return null
  return {
    from: { name: workspaceName, address: `${FROM_LOCAL_PART}@${row.domain}` },
    returnPath: `bounces@bounces.${row.domain}`,
    dkim: { domainName: row.domain, keySelector: row.dkimSelector, privateKey: await secrets.unseal(row.dkimPrivateKey, sealContext.dkimPrivateKey(workspaceId)) },
  }
}

export type Sender = Awaited<ReturnType<typeof senderFor>>

/** `senderFor` once per workspace of a batch of mail, by workspace id. */
export async function sendersFor(db: Db, secrets: Sealer, workspaces: Iterable<{ id: string; name: string }>) {
  const senders = new Map<string, Sender>()
  for (const { id, name } of workspaces) if (!senders.has(id)) senders.set(id, await senderFor(db, secrets, id, name))
  return senders
}
