import { pgTable, text } from 'drizzle-orm/pg-core'
import { at, createdAt } from './columns.ts'
import { workspaces } from './workspaces.ts'

export const JWT_ALGORITHMS = ['HS256', 'RS256', 'ES256', 'EdDSA'] as const
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number]

/**
 * How a workspace's own backend signs the tokens that identify its end users (one per workspace).
 * HS256 secrets are stored sealed (AES-GCM under a key derived from SECRET_KEY), never in plain text;
 * after a rotation the previous secret keeps verifying until `previous_secret_expires_at`.
 */
export const jwtConfigs = pgTable('jwt_configs', {
  workspaceId: text('workspace_id').primaryKey().references(() => workspaces.id, { onDelete: 'cascade' }),
  algorithm: text('algorithm', { enum: JWT_ALGORITHMS }).notNull(),
  secretSealed: text('secret_sealed'),
  previousSecretSealed: text('previous_secret_sealed'),
  previousSecretExpiresAt: at('previous_secret_expires_at'),
  publicKey: text('public_key'),
  jwksUrl: text('jwks_url'),
  issuer: text('issuer'),
  audience: text('audience'),
  createdAt: createdAt(),
  updatedAt: at('updated_at').notNull().defaultNow(),
})
