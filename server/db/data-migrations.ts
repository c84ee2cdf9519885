// Start-up work over existing rows that SQL alone cannot do, run after the schema migrations while the
// migration lock is held (Database.migrate). Each step is idempotent: it only touches rows still in an
// old shape, so running it again, or in several processes one after another, changes nothing.
import { and, eq, isNotNull, like, not } from 'drizzle-orm'
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core'
import { createSecrets, deriveKey, fromBase64Url, SEALED_PREFIX, sealContext, type Secrets } from '../lib/secrets.ts'
import type { Db } from './client.ts'
import { jwtConfigs, sendingDomains, webhooks } from './schema/index.ts'

export async function runDataMigrations(db: Db, secretKey: string) {
  return resealLegacySecrets(db, await createSecrets(secretKey), secretKey)
}

const decoder = new TextDecoder()

/** Opens a value of one of the two formats used before `sealed:v2:`; both began with `v1.`, so the column decides which. */
type LegacyOpener = (value: string, context: string) => Promise<string>

async function legacyOpener(secretKey: string, purpose: string, authenticated: boolean): Promise<LegacyOpener> {
  const key = await crypto.subtle.importKey('raw', new Uint8Array(await deriveKey(secretKey, purpose)), 'AES-GCM', false, ['decrypt'])
  return async (value, context) => {
    const [version, iv, data, extra] = value.split('.')
    if (version !== 'v1' || !iv || !data || extra !== undefined) throw new Error('not a v1 sealed value')
    // base64url (jwt-config) and standard base64 (webhooks, DKIM) both decode once the alphabet is mapped.
    const params = { name: 'AES-GCM', iv: fromBase64Url(iv), ...(authenticated && { additionalData: new TextEncoder().encode(context) }) }
    return decoder.decode(await crypto.subtle.decrypt(params, key, fromBase64Url(data)))
  }
}

interface SealedColumns {
  table: PgTable
  key: PgColumn
  /** Property names of the sealed columns in the drizzle table. */
  columns: string[]
  context(key: string): string
  open: LegacyOpener
}

export interface ResealReport {
  resealed: number
  /** Old values that did not open (sealed under another SECRET_KEY): left as they are, they were unreadable already. */
  unreadable: number
}

/** Re-seals every secret still stored in an old format into the current one, bound to its row's context. */
export async function resealLegacySecrets(db: Db, secrets: Secrets, secretKey: string): Promise<ResealReport> {
  // Before `sealed:v2:` the jwt-config secrets used base64url with their workspace as authenticated
  // data under one key; webhook secrets and DKIM keys used standard base64 without context under another.
  const jwtFormat = await legacyOpener(secretKey, 'jwt-config-secrets', true)
  const plainFormat = await legacyOpener(secretKey, 'sealed-secrets', false)
  const targets: SealedColumns[] = [
    { table: jwtConfigs, key: jwtConfigs.workspaceId, columns: ['secretSealed', 'previousSecretSealed'], context: sealContext.jwtConfigSecret, open: jwtFormat },
    { table: webhooks, key: webhooks.id, columns: ['secret', 'previousSecret'], context: sealContext.webhookSecret, open: plainFormat },
    { table: sendingDomains, key: sendingDomains.workspaceId, columns: ['dkimPrivateKey'], context: sealContext.dkimPrivateKey, open: plainFormat },
  ]
  const report: ResealReport = { resealed: 0, unreadable: 0 }
  for (const target of targets) {
    for (const name of target.columns) {
      const column = (target.table as unknown as Record<string, PgColumn>)[name]!
      const stale = and(isNotNull(column), not(like(column, `${SEALED_PREFIX}%`)))
      const rows = await db.select({ key: target.key, value: column }).from(target.table).where(stale) as { key: string; value: string }[]
      for (const row of rows) {
        const context = target.context(row.key)
        let plaintext: string
        try {
          plaintext = await target.open(row.value, context)
        } catch {
          report.unreadable++
          continue
        }
        // Only if the value is still the one read: a concurrent rotation wins.
        await db.update(target.table).set({ [name]: await secrets.seal(plaintext, context) })
          .where(and(eq(target.key, row.key), eq(column, row.value)))
        report.resealed++
      }
    }
  }
  return report
}
