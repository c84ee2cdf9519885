// `npm run seed`: a demo workspace on the configured database (the same configuration, database and
// migrations as `npm start`), built through the service functions so it looks like real use: events in
// the outbox, counters in step with the rows, and an API key of which only the hash is stored.
import { and, eq, inArray, sql } from 'drizzle-orm'
import type { Db } from '../server/db/client.ts'
import { boards, comments, endUsers, events, labels, posts, statusChanges, users, votes, workspaces } from '../server/db/schema/index.ts'
import { ApiError } from '../server/errors.ts'
import { newId } from '../server/lib/ids.ts'
import { createApiKey } from '../server/modules/api-keys/service.ts'
import { createEntry } from '../server/modules/changelog/service.ts'
import { createComment } from '../server/modules/comments/service.ts'
import { createPost } from '../server/modules/posts/service.ts'
import { toggleVote } from '../server/modules/votes/service.ts'
import { createWorkspace } from '../server/modules/workspaces/service.ts'
import { SCOPES, type KeyCaller } from '../server/plugins/credentials.ts'
import { configOrExit, openMigratedDatabase } from '../server/startup.ts'

export const DEMO_SLUG = 'demo'
export const DEMO_OWNER = 'demo@example.com'

const PEOPLE = [
  ['Ada Lovelace', 'ada@example.com'], ['Grace Hopper', 'grace@example.com'], ['Alan Turing', 'alan@example.com'],
  ['Katherine Johnson', 'katherine@example.com'], ['Margaret Hamilton', 'margaret@example.com'], ['Edsger Dijkstra', 'edsger@example.com'],
  ['Barbara Liskov', 'barbara@example.com'], ['Donald Knuth', 'donald@example.com'],
] as const

const LABELS = [['ux', 'UX', '#8b5cf6'], ['integrations', 'Integrations', '#0ea5e9'], ['reporting', 'Reporting', '#10b981'], ['security', 'Security', '#ef4444'], ['api', 'API', '#f59e0b']] as const

interface DemoComment { by: number | 'team'; body: string; internal?: boolean }
interface DemoPost { board: 'ideas' | 'bugs'; title: string; body: string; status: string; labels: string[]; author: number; voters: number[]; comments?: DemoComment[] }

const POSTS: DemoPost[] = [
  { board: 'ideas', title: 'Dark mode', body: 'Our support team works nights; a dark theme would be easier on the eyes.', status: 'Planned', labels: ['ux'], author: 0, voters: [0, 1, 2, 3, 4, 5, 6], comments: [{ by: 1, body: 'Yes please, for the widget too.' }, { by: 'team', body: 'Designs are under way, thanks for all the votes!' }] },
  { board: 'ideas', title: 'Slack notifications for new feedback', body: 'Post new feedback to a channel of our choice.', status: 'In progress', labels: ['integrations'], author: 1, voters: [1, 2, 3, 4, 7] },
  { board: 'ideas', title: 'Export posts to CSV', body: 'We report on feedback every quarter.', status: 'Complete', labels: ['reporting'], author: 2, voters: [2, 4, 6, 7], comments: [{ by: 'team', body: 'Shipped: find it under Settings, Export.' }] },
  { board: 'ideas', title: 'Single sign-on (SAML)', body: 'Our IT department requires SAML for every tool.', status: 'Under review', labels: ['security'], author: 3, voters: [0, 1, 3, 5, 6, 7], comments: [{ by: 'team', body: 'An enterprise renewal depends on this one; talk to sales before replying.', internal: true }] },
  { board: 'ideas', title: 'Public API for the roadmap', body: 'We would like to show the roadmap inside our own app.', status: 'Open', labels: ['api'], author: 4, voters: [4, 5] },
  { board: 'ideas', title: 'Keyboard shortcuts', body: 'j/k to move between posts, v to vote.', status: 'Open', labels: ['ux'], author: 5, voters: [5] },
  { board: 'ideas', title: 'Custom domain for the portal', body: 'feedback.ourcompany.com instead of the default address.', status: 'Planned', labels: [], author: 6, voters: [0, 6, 7] },
  { board: 'ideas', title: 'Weekly digest e-mail', body: 'A summary of the week for people who do not log in every day.', status: 'Open', labels: ['reporting'], author: 7, voters: [] },
  { board: 'ideas', title: 'Zapier integration', body: 'Connect feedback to the rest of our stack.', status: 'Closed', labels: ['integrations'], author: 0, voters: [0], comments: [{ by: 'team', body: 'Closing in favour of webhooks, which Zapier can consume directly.' }] },
  { board: 'ideas', title: 'Several languages in the widget', body: 'Half of our customers speak German.', status: 'Under review', labels: ['ux'], author: 1, voters: [1, 3], comments: [{ by: 2, body: 'French as well, please.' }] },
  { board: 'bugs', title: 'Widget overlaps the chat bubble', body: 'Both sit in the bottom-right corner on mobile.', status: 'In progress', labels: ['ux'], author: 2, voters: [2, 3, 5], comments: [{ by: 'team', body: 'Reproduced; a fix is in review.' }, { by: 2, body: 'Thanks for the quick reply!' }] },
  { board: 'bugs', title: 'Search ignores accented characters', body: 'Searching for "cafe" does not find "café".', status: 'Open', labels: [], author: 3, voters: [3] },
  { board: 'bugs', title: 'Vote count off by one after a merge', body: 'Merged two posts and the total looked wrong.', status: 'Complete', labels: [], author: 4, voters: [4, 6], comments: [{ by: 'team', body: 'Fixed: counts are now recomputed from the votes on every merge.' }] },
  { board: 'bugs', title: 'Export times out on large boards', body: 'Boards with thousands of posts never finish exporting.', status: 'Planned', labels: ['reporting'], author: 5, voters: [5, 7] },
  { board: 'bugs', title: 'Avatar upload fails for large PNG files', body: 'A 1.5 MB PNG is refused although the limit is 2 MB.', status: 'Open', labels: [], author: 6, voters: [] },
]

/**
 * Moves a post and everything about it `days` into the past. Rows made in one transaction all carry the
 * same now(); spreading them gives the metrics trend and the trending sort something to show.
 */
async function backdate(tx: Db, postId: string, days: number) {
  const shift = sql`make_interval(days => ${days})`
  await tx.update(posts).set({ createdAt: sql`${posts.createdAt} - ${shift}`, updatedAt: sql`${posts.updatedAt} - ${shift}` }).where(eq(posts.id, postId))
  await tx.update(votes).set({ createdAt: sql`${votes.createdAt} - ${shift}` }).where(eq(votes.postId, postId))
  await tx.update(comments).set({ createdAt: sql`${comments.createdAt} - ${shift}`, updatedAt: sql`${comments.updatedAt} - ${shift}` }).where(eq(comments.postId, postId))
  await tx.update(statusChanges).set({ createdAt: sql`${statusChanges.createdAt} - ${shift}` }).where(eq(statusChanges.postId, postId))
  await tx.update(events).set({ createdAt: sql`${events.createdAt} - ${shift}` })
    .where(sql`coalesce(${events.data}->'post'->>'id', ${events.data}->>'post_id', ${events.data}->'vote'->>'post_id') = ${postId}`)
}

export interface SeedResult {
  created: boolean
  workspaceId: string
  /** Only when the workspace was created now: the full key, which is not stored anywhere. */
  apiKey: string | null
  urls: string[]
  /** Where a person goes: the portal, the widget on a sample page, the sign-in page. */
  pages: { portal: string; widget: string; signIn: string }
  posts: number
}

const pagesOf = (baseUrl: string) => ({ portal: `${baseUrl}/portal/${DEMO_SLUG}`, widget: `${baseUrl}/widget/try/${DEMO_SLUG}`, signIn: `${baseUrl}/signin` })

const publicUrls = (baseUrl: string) => {
  const portal = `${baseUrl}/api/v1/public/${DEMO_SLUG}`
  return [portal, `${portal}/boards/ideas/posts`, `${portal}/boards/bugs/posts`, `${portal}/roadmap`]
}

/** Creates the demo workspace unless it exists; everything in one transaction, so a failed run leaves nothing behind. */
export async function seedDemo(db: Db, baseUrl: string): Promise<SeedResult> {
  const [existing] = await db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.slug, DEMO_SLUG))
  if (existing) return { created: false, workspaceId: existing.id, apiKey: null, urls: publicUrls(baseUrl), pages: pagesOf(baseUrl), posts: 0 }
  try {
    return await db.transaction(async (transaction) => {
      // The services take a Db and open their own transactions, which become savepoints inside this one.
      const tx = transaction as unknown as Db
      await tx.insert(users).values({ id: newId('user'), email: DEMO_OWNER, name: 'Demo Owner', emailVerified: true }).onConflictDoNothing({ target: users.email })
      const [owner] = await tx.select().from(users).where(eq(users.email, DEMO_OWNER))
      const workspace = await createWorkspace(tx, owner!.id, { name: 'Demo', slug: DEMO_SLUG })
      // Comped, so the printed key keeps working after the 14-day trial.
      await tx.update(workspaces).set({ comped: true, settings: { allow_anonymous: true, brand_color: '#6d28d9' } }).where(eq(workspaces.id, workspace.id))
      await tx.insert(boards).values([
        { id: newId('board'), workspaceId: workspace.id, slug: 'ideas', name: 'Ideas', description: 'What should we build next?' },
        { id: newId('board'), workspaceId: workspace.id, slug: 'bugs', name: 'Bugs', description: 'Something broken? Tell us.' },
      ])
      await tx.insert(labels).values(LABELS.map(([slug, name, color]) => ({ id: newId('label'), workspaceId: workspace.id, slug, name, color })))
      const people = await tx.insert(endUsers).values(PEOPLE.map(([name, email]) => ({ id: newId('endUser'), workspaceId: workspace.id, name, email }))).returning()

      const { key, secret } = await createApiKey(tx, workspace.id, owner!.id, { name: 'Demo key', scopes: [...SCOPES] })
      // Team replies and status changes are made by the key, as an integration would.
      const team: KeyCaller = { kind: 'api_key', keyId: key.id, name: key.name, scopes: key.scopes, workspaceId: workspace.id }
      for (const [index, item] of POSTS.entries()) {
        const post = await createPost(tx, workspace.id, team, item.board, { title: item.title, body: item.body, status: item.status, labels: item.labels, end_user_id: people[item.author]!.id })
        for (const voter of item.voters) await toggleVote(tx, workspace.id, team, post.id, { end_user_id: people[voter]!.id })
        for (const comment of item.comments ?? []) {
          const author = comment.by === 'team' ? {} : { end_user_id: people[comment.by]!.id }
          await createComment(tx, workspace.id, team, post.id, { body: comment.body, internal: comment.internal, ...author })
        }
        await backdate(tx, post.id, 2 * (POSTS.length - 1 - index))
      }
      // A published changelog entry announcing what shipped (the CSV export and the merge fix).
      const shipped = await tx.select({ id: posts.id }).from(posts).where(and(eq(posts.workspaceId, workspace.id), inArray(posts.title, ['Export posts to CSV', 'Vote count off by one after a merge'])))
      await createEntry(tx, workspace.id, team, {
        title: 'CSV export, and vote counts you can trust',
        body: 'Two things shipped this week:\n\n- **Export posts to CSV** from Settings, Export, for your quarterly reports.\n- Vote counts are recomputed from the votes on every merge, so merged posts add up.\n\nThanks to everyone who asked for these.',
        post_ids: shipped.map((post) => post.id),
        published_at: new Date(Date.now() - 86_400_000).toISOString(),
      })
      return { created: true, workspaceId: workspace.id, apiKey: secret, urls: publicUrls(baseUrl), pages: pagesOf(baseUrl), posts: POSTS.length }
    })
  } catch (error) {
    // Another run created it between the check and the insert.
    if (error instanceof ApiError && error.code === 'SLUG_TAKEN') return seedDemo(db, baseUrl)
    throw error
  }
}

async function main() {
  const config = configOrExit(process.env)
  const database = await openMigratedDatabase(config, 'seed script')
  try {
    const result = await seedDemo(database.db, config.baseUrl)
    if (result.created) {
      console.log(`Created the demo workspace "${DEMO_SLUG}" (owner ${DEMO_OWNER}, comped) with ${result.posts} posts on boards ideas and bugs.`)
      console.log(`\nAPI key, shown this once (only its hash is stored):\n  ${result.apiKey}`)
    } else {
      console.log(`The demo workspace "${DEMO_SLUG}" already exists; nothing was changed. Its API key was shown when it was created; make a new one in the dashboard if it is lost.`)
    }
    console.log(`\nOpen in a browser:`)
    console.log(`  Portal:            ${result.pages.portal}`)
    console.log(`  Widget test page:  ${result.pages.widget}`)
    console.log(`  Sign in:           ${result.pages.signIn}  (as ${DEMO_OWNER}; without SMTP_URL the sign-in link is printed in the server's log)`)
    console.log(`\nPublic API (no credential):\n${result.urls.map((url) => `  ${url}`).join('\n')}`)
  } finally {
    await database.close()
  }
}

if (import.meta.main) await main()
