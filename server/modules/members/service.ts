import { and, asc, eq, sql } from 'drizzle-orm'
import type { AppContext } from '../../context.ts'
import type { Db } from '../../db/client.ts'
import { members, users, workspaces, type Role } from '../../db/schema/index.ts'
import { ApiError, conflict, forbidden, notFound } from '../../errors.ts'
import { sendToGivenAddress, withWorkspaceLogo } from '../../lib/mail.ts'
import type { Member, Workspace } from '../../plugins/credentials.ts'
import { consumeAuthToken, createAuthToken, deleteAuthToken, deleteEmptyAccount, findOrCreateAccount, issueSession, linkTo, normalizeEmail } from '../auth/service.ts'
import { fileUrl } from '../files/model.ts'
import { revokeMemberGrants } from '../oauth/grants.ts'
import type { MemberRow } from './model.ts'

const memberColumns = {
  userId: members.userId, email: users.email, name: users.name, role: members.role,
  status: members.status, invitedAt: members.invitedAt, joinedAt: members.joinedAt,
}

export function listMembers(db: Db, workspaceId: string): Promise<MemberRow[]> {
  return db.select(memberColumns).from(members).innerJoin(users, eq(users.id, members.userId))
    .where(eq(members.workspaceId, workspaceId)).orderBy(asc(members.joinedAt), asc(users.email))
}

async function getMember(db: Db, workspaceId: string, userId: string): Promise<MemberRow> {
  const [row] = await db.select(memberColumns).from(members).innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.workspaceId, workspaceId), eq(members.userId, userId)))
  if (!row) throw notFound('Member')
  return row
}

/** Invites by e-mail (creating the account if new); re-inviting a pending address sends a fresh link. */
export async function inviteMember(ctx: AppContext, workspace: Workspace, inviterId: string, input: { email: string; role: 'admin' | 'member' }) {
  const email = normalizeEmail(input.email)
  const { user, created } = await findOrCreateAccount(ctx.db, email)
  const [existing] = await ctx.db.select().from(members).where(and(eq(members.workspaceId, workspace.id), eq(members.userId, user.id)))
  if (existing?.status === 'active') throw conflict(`${email} is already a member of this workspace`)
  const values = { role: input.role, status: 'pending' as const, invitedBy: inviterId, invitedAt: new Date() }
  await ctx.db.insert(members).values({ workspaceId: workspace.id, userId: user.id, ...values })
    .onConflictDoUpdate({ target: [members.workspaceId, members.userId], set: values })
  const token = await createAuthToken(ctx.db, { purpose: 'invitation', email, userId: user.id, data: { workspace_id: workspace.id } })
  const link = linkTo(ctx, 'accept-invite', { token, workspace: workspace.slug })
  // Not sent (refused, 422; no mail server, 503): the members list shows no invitation nobody received. A
  // re-invitation gets its earlier one back, whose link (sent before) still works.
  const pending = and(eq(members.workspaceId, workspace.id), eq(members.userId, user.id), eq(members.status, 'pending'))
  await sendToGivenAddress(ctx.mail, withWorkspaceLogo({
    to: email,
    subject: `You are invited to ${workspace.name} on Chorus`,
    text: `You have been invited to join ${workspace.name} on Chorus as ${input.role}. Accept within 7 days:\n\n${link}\n`,
    workspaceId: workspace.id,
  }, { name: workspace.name, logoUrl: fileUrl(ctx.config.baseUrl, workspace.logoFileId) }), ['body', 'email'], async () => {
    await deleteAuthToken(ctx.db, token)
    if (existing) await ctx.db.update(members).set({ role: existing.role, status: existing.status, invitedBy: existing.invitedBy, invitedAt: existing.invitedAt }).where(pending)
    else await ctx.db.delete(members).where(pending)
    if (created) await deleteEmptyAccount(ctx.db, user.id)
  })
  return getMember(ctx.db, workspace.id, user.id)
}

async function activate(db: Db, workspaceId: string, userId: string) {
  const [row] = await db.update(members).set({ status: 'active', joinedAt: sql`now()` })
    .where(and(eq(members.workspaceId, workspaceId), eq(members.userId, userId), eq(members.status, 'pending'))).returning()
  return row ?? null
}

/** The signed-in user accepts their pending invitation to the workspace named by slug. */
export async function acceptInvitation(db: Db, slug: string, userId: string) {
  const [workspace] = await db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.slug, slug))
  if (!workspace || !(await activate(db, workspace.id, userId))) throw notFound('Invitation')
  await db.update(users).set({ emailVerified: true }).where(eq(users.id, userId))
  return getMember(db, workspace.id, userId)
}

/** The e-mailed invitation link: sets the name, verifies the address (the link proved it) and signs in. */
export async function acceptInviteToken(ctx: AppContext, token: string, name: string, userAgent: string | null) {
  const row = await consumeAuthToken(ctx.db, 'invitation', token)
  const workspaceId = row?.data.workspace_id
  if (!row?.userId || typeof workspaceId !== 'string') throw new ApiError('UNAUTHENTICATED', 'The invitation link is invalid, expired or already used')
  if (!(await activate(ctx.db, workspaceId, row.userId))) throw notFound('Invitation')
  const [user] = await ctx.db.update(users).set({ name: name.trim(), emailVerified: true, updatedAt: sql`now()` }).where(eq(users.id, row.userId)).returning()
  return { user: user!, session: await issueSession(ctx, row.userId, { userAgent }) }
}

const RANK: Record<Role, number> = { member: 0, admin: 1, owner: 2 }

/** Role changes; `owner` hands ownership over (owner only) and the previous owner becomes admin. */
export async function changeRole(db: Db, workspaceId: string, actor: Member, targetUserId: string, role: Role) {
  const target = await getMember(db, workspaceId, targetUserId)
  if (role === 'owner') {
    if (actor.role !== 'owner') throw new ApiError('OWNER_ONLY', 'Only the owner can hand over ownership')
    if (target.userId === actor.userId) return target
    if (target.status !== 'active') throw conflict('Ownership can only go to a member who has accepted the invitation')
    await db.transaction(async (tx) => {
      await tx.update(members).set({ role: 'admin' }).where(and(eq(members.workspaceId, workspaceId), eq(members.userId, actor.userId)))
      await tx.update(members).set({ role: 'owner' }).where(and(eq(members.workspaceId, workspaceId), eq(members.userId, target.userId)))
    })
    return getMember(db, workspaceId, targetUserId)
  }
  if (target.role === 'owner') {
    if (actor.userId === target.userId) throw conflict('A workspace always has one owner: hand ownership to another member first')
    throw new ApiError('OWNER_ONLY', "Only the owner can change the owner's role")
  }
  if (RANK[actor.role] < RANK.admin) throw forbidden('Changing roles needs the admin role')
  await db.update(members).set({ role }).where(and(eq(members.workspaceId, workspaceId), eq(members.userId, targetUserId)))
  return getMember(db, workspaceId, targetUserId)
}

/** Admins remove others; anyone may leave; the owner stays until ownership is handed over. */
export async function removeMember(db: Db, workspaceId: string, actor: Member, targetUserId: string) {
  const target = await getMember(db, workspaceId, targetUserId)
  if (target.role === 'owner') throw conflict('The owner cannot be removed: hand ownership to another member first')
  if (target.userId !== actor.userId && RANK[actor.role] < RANK.admin) throw forbidden('Removing members needs the admin role')
  await db.transaction(async (tx) => {
    await tx.delete(members).where(and(eq(members.workspaceId, workspaceId), eq(members.userId, targetUserId)))
    // The apps they connected to this workspace stop for good, not only while they are away.
    await revokeMemberGrants(tx as unknown as Db, workspaceId, targetUserId)
  })
}
