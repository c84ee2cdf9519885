import { eq } from 'drizzle-orm'
import { workspaces } from '../../server/db/schema/index.ts'
import type { Harness, TestClient } from './harness.ts'
import { signIn } from './session.ts'

let counter = 0
export const uniqueSlug = (base = 'ws') => `${base}-${Date.now().toString(36)}-${++counter}`

export const ALL_SCOPES = [
  'workspace:read', 'boards:read', 'statuses:read', 'labels:read', 'labels:write', 'posts:read', 'posts:write',
  'comments:read', 'comments:write', 'comments:internal', 'votes:read', 'votes:write', 'webhooks:read', 'webhooks:write',
  'notifications:read', 'notifications:write', 'changelog:read', 'changelog:write', 'companies:read', 'companies:write', 'end_users:read', 'end_users:write',
  'imports:write',
]

export interface WorkspaceFixture {
  owner: TestClient
  ownerId: string
  slug: string
  id: string
  /** Creates a key through the dashboard route and returns its full value. */
  key(scopes?: string[], name?: string): Promise<string>
}

/** A signed-in owner with a fresh workspace, made through the real HTTP routes (with SMTP on, pass its `inbox`). */
export async function workspaceFixture(h: Harness, slug = uniqueSlug(), inbox?: Parameters<typeof signIn>[3]): Promise<WorkspaceFixture> {
  const owner = h.client()
  const user = await signIn(h, owner, `owner-${slug}@example.com`, inbox)
  const created = await owner.post('/api/v1/workspaces', { name: `Workspace ${slug}`, slug })
  if (created.status !== 201) throw new Error(`workspace create failed: ${created.status} ${JSON.stringify(created.body)}`)
  return {
    owner,
    ownerId: user.id,
    slug,
    id: created.body.id,
    async key(scopes = ALL_SCOPES, name = 'test key') {
      const res = await owner.post(`/api/v1/workspaces/${slug}/api-keys`, { name, scopes })
      if (res.status !== 201) throw new Error(`key create failed: ${res.status} ${JSON.stringify(res.body)}`)
      return res.body.key as string
    },
  }
}

/** Signs a new user in and makes them an active member with `role` through invite + accept. */
export async function addMember(h: Harness, fixture: WorkspaceFixture, email: string, role: 'admin' | 'member') {
  const invited = await fixture.owner.post(`/api/v1/workspaces/${fixture.slug}/members`, { email, role })
  if (invited.status !== 201) throw new Error(`invite failed: ${invited.status} ${JSON.stringify(invited.body)}`)
  const client = h.client()
  const user = await signIn(h, client, email)
  const accepted = await client.post(`/api/v1/workspaces/${fixture.slug}/members/accept`)
  if (accepted.status !== 200) throw new Error(`accept failed: ${accepted.status}`)
  return { client, userId: user.id }
}

/** Billing state is set straight in the database: the superadmin and billing routes have their own tests. */
export async function setSubscription(h: Harness, workspaceId: string, change: Partial<typeof workspaces.$inferInsert>) {
  await h.db.update(workspaces).set(change).where(eq(workspaces.id, workspaceId))
}

/** A board made straight in the database (the boards routes have their own tests). */
export async function boardFixture(h: Harness, workspaceId: string, slug = 'ideas', isPrivate = false) {
  const { boards } = await import('../../server/db/schema/index.ts')
  const { newId } = await import('../../server/lib/ids.ts')
  const [board] = await h.db.insert(boards).values({ id: newId('board'), workspaceId, slug, name: slug[0]!.toUpperCase() + slug.slice(1), isPrivate }).returning()
  return board!
}

/** A label made straight in the database. */
export async function labelFixture(h: Harness, workspaceId: string, slug: string) {
  const { labels } = await import('../../server/db/schema/index.ts')
  const { newId } = await import('../../server/lib/ids.ts')
  const [label] = await h.db.insert(labels).values({ id: newId('label'), workspaceId, slug, name: slug }).returning()
  return label!
}
