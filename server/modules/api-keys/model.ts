import { Enum } from '../../lib/schema.ts'
import { t } from 'elysia'
import type { apiKeys } from '../../db/schema/index.ts'
import { SCOPES } from '../../plugins/auth.ts'
import { Timestamp } from '../user/model.ts'
import { WorkspaceSlugParams } from '../workspaces/model.ts'

export const ScopeList = t.Array(Enum([...SCOPES]), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true })

export const APIKeyCreate = t.Object({ name: t.String({ minLength: 1, maxLength: 100 }), scopes: ScopeList }, { additionalProperties: false, description: 'APIKeyCreate' })
export const APIKeyScopesUpdate = t.Object({ scopes: ScopeList }, { additionalProperties: false, description: 'APIKeyScopesUpdate' })
export const KeyParams = t.Object({ workspace_slug: WorkspaceSlugParams.properties.workspace_slug, key_id: t.String({ maxLength: 64 }) })

const keyFields = {
  id: t.String(),
  name: t.String(),
  start: t.String({ description: '`chorus_sk_` and the first 4 characters, to recognise the key' }),
  scopes: t.Array(t.String()),
  created_at: Timestamp,
  last_used_at: t.Nullable(Timestamp),
}
export const APIKeyResponse = t.Object(keyFields, { description: 'APIKeyResponse' })
export const APIKeyCreatedResponse = t.Object({ ...keyFields, key: t.String({ description: 'The full key. Shown only in this response; only its SHA-256 is stored.' }) }, { description: 'APIKeyCreatedResponse' })

export const toApiKeyResponse = (key: typeof apiKeys.$inferSelect) => ({
  id: key.id,
  name: key.name,
  start: key.start,
  scopes: key.scopes,
  created_at: key.createdAt.toISOString(),
  last_used_at: key.lastUsedAt?.toISOString() ?? null,
})
