import { t } from 'elysia'
import { Enum, Timestamp } from '../../lib/schema.ts'

export const CustomDomainRequest = t.Object({
  domain: t.String({
    minLength: 4,
    maxLength: 253,
    pattern: '^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$',
    description: 'The domain notification e-mail is sent from, e.g. `mail.acme.com`',
    examples: ['mail.acme.com'],
  }),
}, { additionalProperties: false, $id: 'SendingDomainCreate', examples: [{ domain: 'mail.acme.example' }] })

export const DnsRecord = t.Object({
  purpose: Enum(['spf', 'dkim', 'return_path']),
  type: Enum(['TXT', 'CNAME']),
  name: t.String(),
  value: t.String(),
  verified: t.Boolean({ description: 'Whether the last lookup found it' }),
})

export const CustomDomainResponse = t.Object({
  domain: t.String(),
  status: Enum(['pending', 'verified']),
  from_address: t.String({ description: 'Notification e-mail goes out from this address once verified' }),
  records: t.Array(DnsRecord, { description: 'Add these to the domain’s DNS; the status turns `verified` when all are found' }),
  verified_at: t.Nullable(Timestamp),
  last_checked_at: t.Nullable(Timestamp),
  created_at: Timestamp,
}, { $id: 'SendingDomain', examples: [{ domain: 'mail.acme.example', status: 'pending', from_address: 'feedback@mail.acme.example', records: [{ purpose: 'spf', type: 'TXT', name: 'mail.acme.example', value: 'v=spf1 include:chorus.example ~all', verified: false }], last_checked_at: null, verified_at: null, created_at: '2026-11-22T09:30:00.000Z' }], additionalProperties: true })
