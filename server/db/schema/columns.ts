import { text, timestamp } from 'drizzle-orm/pg-core'

/** Times are always stored with a time zone and read as Date. */
export const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

export const createdAt = () => at('created_at').notNull().defaultNow()

export const id = () => text('id').primaryKey()
