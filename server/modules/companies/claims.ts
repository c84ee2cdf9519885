import { t } from 'elysia'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { JWTPayload } from 'jose'
import { companyFields } from './model.ts'
import { knownCurrency, type CompanyInput } from './service.ts'

/** At most this many companies per token. */
export const MAX_TOKEN_COMPANIES = 20

const TokenCompany = TypeCompiler.Compile(t.Object({
  id: t.Union([t.String({ minLength: 1, maxLength: 128 }), t.Integer({ minimum: 0 })]),
  ...companyFields,
}))

export interface CompanyClaims {
  /** The end user's `company` text: a string claim, else the first valid company's name. */
  label?: string | null
  /** The companies to link the user to, exactly; undefined leaves the links alone. */
  companies?: (CompanyInput & { id: string })[]
}

function entryOf(value: unknown): (CompanyInput & { id: string }) | undefined {
  if (!TokenCompany.Check(value)) return undefined
  const { id, name, mrr, currency, plan, seats, attributes } = value
  if (currency !== undefined && !knownCurrency(currency)) return undefined
  return { id: String(id), name, mrr, currency, plan, seats, attributes }
}

/**
 * The rule for identify's company claims (docs/demand.md#identify): they never make identify fail, since
 * one bad field in a customer's token must not lock their users out. `company` may be a string (a label
 * only: no company record, having no id), an object `{id, name, mrr, currency, plan, seats, attributes}`,
 * and `companies` an array of such objects (at most 20). Each object is taken whole or ignored whole:
 * one that fails the schema of PUT /companies (a negative or fractional MRR, an unknown currency, a
 * nested attribute, too many attributes) is left out; any other type (a number, a boolean, an array as
 * `company`) is ignored. When at least one object is valid, or `companies` is an empty array, the user's
 * links become exactly the valid companies; otherwise they stay as they were.
 */
export function companyClaims(payload: JWTPayload): CompanyClaims {
  const single = payload.company
  const list = payload.companies
  const raw: unknown[] = []
  let label: string | null | undefined
  if (typeof single === 'string') label = single.trim().slice(0, 200) || null
  else if (single !== null && typeof single === 'object' && !Array.isArray(single)) raw.push(single)
  const explicitEmpty = Array.isArray(list) && list.length === 0
  if (Array.isArray(list) && list.length <= MAX_TOKEN_COMPANIES) raw.push(...list)
  const valid = new Map<string, CompanyInput & { id: string }>()
  for (const value of raw) {
    const entry = entryOf(value)
    if (entry && !valid.has(entry.id)) valid.set(entry.id, entry)
  }
  const companies = valid.size || explicitEmpty ? [...valid.values()] : undefined
  return { label: label ?? companies?.[0]?.name ?? companies?.[0]?.id, companies }
}
