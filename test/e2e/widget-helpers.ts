// Shared by the widget specs: seeding through the e2e server, the customer's page, and the panel.
import { expect, type Page } from '@playwright/test'
import { SignJWT } from 'jose'
import { E2E_HOST_ORIGIN } from './ports.ts'

export interface Seeded { slug: string; workspaceId: string; secret: string }
export interface SeedPost { title: string; votes?: number; status?: string; body?: string; comments?: string[]; internalComments?: string[] }
/** What /__e2e/seed makes (test/e2e/server.ts). */
export interface SeedOptions {
  posts?: SeedPost[]
  /** Posts on the public board `bugs` ("Bugs", listed before "Feature ideas"). */
  bugs?: SeedPost[]
  /** This many more posts on `ideas`, titled "Idea 1", "Idea 2", ... */
  many?: number
  allowAnonymous?: boolean
  logo?: boolean
  brandColor?: string
  defaultBoard?: string
  /** A published changelog entry with this Markdown body ("What's new"). */
  news?: string
  /** `settings.moderation` (docs/moderation.md). */
  moderation?: 'off' | 'suspicious' | 'anonymous'
  /** `settings.proof_of_work`: anonymous posts need a solved ALTCHA challenge. */
  proofOfWork?: boolean
}

export async function seed(options: SeedOptions = {}): Promise<Seeded> {
  const response = await fetch(`${E2E_HOST_ORIGIN}/__e2e/seed`, { method: 'POST', body: JSON.stringify(options) })
  return response.json() as Promise<Seeded>
}

export async function stored(workspace: string, title: string) {
  const response = await fetch(`${E2E_HOST_ORIGIN}/__e2e/post?workspace=${workspace}&title=${encodeURIComponent(title)}`)
  return response.json() as Promise<{ post: any; author: any; events: { type: string; data: any }[] }>
}

/** The plain text of the newest e-mail the SMTP server received for `to`, waiting for it up to `waitMs`. */
export async function lastMail(to: string, after = '', waitMs = 5000): Promise<string> {
  for (let i = 0; i < waitMs / 100; i++) {
    const { text } = await (await fetch(`${E2E_HOST_ORIGIN}/__e2e/mail?to=${encodeURIComponent(to)}`)).json() as { text: string | null }
    if (text && text !== after) return text
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`no e-mail to ${to}`)
}

/** The customer's page, on its own origin, with the one-line embed. */
export async function visit(page: Page, workspace: string, attributes: Record<string, string> = {}, launcherName = 'Feedback') {
  await page.goto(`/?${new URLSearchParams({ workspace, board: 'ideas', theme: 'light', ...attributes })}`)
  const launcher = page.getByRole('button', { name: launcherName })
  await expect(launcher).toBeVisible()
  return launcher
}

export const dialog = (page: Page) => page.getByRole('dialog')

export const customerToken = (secret: string, claims: Record<string, unknown>) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode(secret))
