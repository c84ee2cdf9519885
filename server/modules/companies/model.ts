import { t } from 'elysia'
import { PagingQuery, pageEnvelope } from '../../lib/paging-schema.ts'
import { Enum, Integer, Timestamp, WorkspaceSlugParams } from '../../lib/schema.ts'
import { PostResponse } from '../posts/model.ts'

/** At most this many custom attributes per company; each value a string (≤ 1,000 characters), number, boolean or null. */
export const MAX_ATTRIBUTES = 50
/** MRR above 10^13 minor units (100 billion a month) is a unit mistake, not a customer. */
export const MAX_MRR = 10_000_000_000_000

const Mrr = Integer({ minimum: 0, maximum: MAX_MRR, description: 'Monthly recurring revenue in minor units of `currency` (cents for USD): a non-negative integer' })
const Currency = t.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code (upper case), default USD. Only companies in the workspace\'s revenue currency add to `demand.mrr` (docs/demand.md)' })
const AttributeValue = t.Union([t.String({ maxLength: 1000 }), t.Number(), t.Boolean(), t.Null()])
export const Attributes = t.Record(t.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$' }), AttributeValue, {
  maxProperties: MAX_ATTRIBUTES, description: `Custom attributes: at most ${MAX_ATTRIBUTES}, keys of letters, digits, \`_\`, \`.\` and \`-\` (1–64), values flat (string ≤ 1,000 characters, number, boolean or null)`,
})

/** The fields a company carries, as PUT takes them and as identify's `company` object gives them (plus its `id`). */
export const companyFields = {
  name: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Default: the external id on creation' })),
  mrr: t.Optional(Mrr),
  currency: t.Optional(Currency),
  plan: t.Optional(t.Nullable(t.String({ minLength: 1, maxLength: 64, description: 'Your plan name; weighs votes when the workspace sets `plan_weights`' }))),
  seats: t.Optional(t.Nullable(Integer({ minimum: 0, maximum: 10_000_000 }))),
  attributes: t.Optional(Attributes),
}

export const CompanyPut = t.Object(companyFields, {
  additionalProperties: false, $id: 'CompanyPut',
  examples: [{ name: 'Customer Inc', mrr: 500000, currency: 'USD', plan: 'enterprise', seats: 40, attributes: { region: 'EU', renewal: '2027-03-01' } }],
})

const companyExample = {
  id: 'co_0mi9x2k3aq1b2c3d4e5f6g7h8', external_id: 'cust-981', name: 'Customer Inc', mrr: 500000, currency: 'USD', plan: 'enterprise', seats: 40,
  attributes: { region: 'EU' }, users: 3, created_at: '2026-11-22T09:30:00.000Z', updated_at: '2026-11-23T14:05:12.345Z',
}

export const CompanyResponse = t.Object({
  id: t.String(),
  external_id: t.String({ description: 'Your id for the company (the path key of PUT)' }),
  name: t.String(),
  mrr: t.Nullable(Integer({ description: 'Minor units; null when the workspace shows revenue to admins only and the caller is a member' })),
  currency: t.String(),
  plan: t.Nullable(t.String()),
  seats: t.Nullable(Integer()),
  attributes: t.Record(t.String(), AttributeValue),
  users: Integer({ description: 'End users linked to the company' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Company', examples: [companyExample] })

export const CompanyDetail = t.Object({
  ...CompanyResponse.properties,
  requested: t.Array(PostResponse, { description: 'Posts written by the company\'s end users, newest first (at most 100)' }),
  voted: t.Array(PostResponse, { description: 'Posts the company\'s verified end users voted for, most votes first (at most 100)' }),
}, { $id: 'CompanyDetail', examples: [{ ...companyExample, requested: [], voted: [] }] })

export const CompanyListQuery = t.Object({
  ...PagingQuery,
  sort: t.Optional(Enum(['mrr', 'name', 'new'], { description: '`mrr` (default): highest MRR first; `name`; `new`: newest first' })),
  q: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Matches the name or external id (case-insensitive substring)' })),
}, { additionalProperties: false })

export const CompanyPage = pageEnvelope(CompanyResponse, 'CompanyPage', [{ items: [companyExample], page: 1, per_page: 20, total: 1, total_pages: 1 }])

export const CompanyParams = t.Object({
  ...WorkspaceSlugParams.properties,
  company_id: t.String({ minLength: 1, maxLength: 128, description: 'Your external id, or the `co_` id', examples: ['cust-981'] }),
})

export const CompanyUserParams = t.Object({
  ...CompanyParams.properties,
  end_user_id: t.String({ minLength: 1, maxLength: 255, description: 'The `eu_` id, or your own id for the person (the `sub` of your identify token)', examples: ['user-1234'] }),
})

export const DemandSettings = t.Object({
  currency: Currency,
  plan_weights: t.Record(t.String({ minLength: 1, maxLength: 64 }), t.Number({ minimum: 0, maximum: 1000 }), { maxProperties: 100, description: 'Plan name → weight of a verified vote from a user of a company on that plan (a user in several companies weighs by the highest)' }),
  default_weight: t.Number({ minimum: 0, maximum: 1000, description: 'The weight of any other verified vote (default 1)' }),
  revenue_visible_to: Enum(['member', 'admin'], { description: 'Who on the team sees MRR (company `mrr`, post `demand.mrr`): every member (default) or admins and the owner. Keys and access tokens see it with `companies:read`' }),
}, { $id: 'DemandSettings', examples: [{ currency: 'USD', plan_weights: { enterprise: 5, pro: 2 }, default_weight: 1, revenue_visible_to: 'admin' }] })

export const DemandSettingsUpdate = t.Partial(DemandSettings, { additionalProperties: false, minProperties: 1, $id: 'DemandSettingsUpdate', examples: [{ plan_weights: { enterprise: 5, pro: 2 } }] })
