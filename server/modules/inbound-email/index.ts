import { Elysia } from 'elysia'
import type { AppContext } from '../../context.ts'
import { ApiError } from '../../errors.ts'
import { readBodyCapped } from '../../lib/body.ts'
import { authPlugin } from '../../plugins/auth.ts'
import { INBOUND_EMAIL_LIMIT } from '../../plugins/request.ts'
import { WorkspaceSlugParams } from '../../lib/schema.ts'
import { intakeAddress } from './addresses.ts'
import { InboundEmailResult, InboundTokenParams, IntakeTokenResponse } from './model.ts'
import { receiveEmail, rotateIntakeToken, workspaceByIntakeToken } from './service.ts'

const tags = ['Inbound e-mail']

const RECEIVE_DESCRIPTION = `Takes one raw RFC 822 message (\`Content-Type: message/rfc822\`, at most ${INBOUND_EMAIL_LIMIT} bytes, else 413), as an inbound-mail provider or an MTA pipe delivers it to \`{token}@{INBOUND_EMAIL_DOMAIN}\`. No credential: the unguessable token in the path is the credential, and an unknown or rotated token is 404.

* A reply to one of our notification e-mails (its In-Reply-To or References name the notification's Message-ID, or a message received here earlier) becomes a comment on that post, without the quoted text; the member the notification went to comments as themselves when the reply is authenticated (as below), anyone else as an end user.
* Any other message becomes a post on the default board (\`settings.default_board\`, else the oldest public board): subject = title, text (or the HTML as text) = body, the From address = the end user (created on first mail). The sender is verified only when the message is authenticated for the From domain: an aligned DKIM signature that verifies, or \`dmarc=pass\` / aligned \`dkim=pass\` in the \`Authentication-Results\` of a server listed in INBOUND_TRUSTED_AUTHSERV_IDS. Otherwise it writes as an unverified identity, like an anonymous widget write; a confirmed address never lends its \`verified\` to an unauthenticated message (it gets an unverified identity of its own). Replies follow the same rule (docs/security.md).
* Automatic mail is answered 200 with \`outcome: dropped\` and a reason, never posted: \`Auto-Submitted\` other than \`no\` and \`X-Auto-Response-Suppress\` (RFC 3834 auto-replies, Outlook and Gmail vacation replies), \`Precedence: bulk/junk/list\` and \`List-*\` headers (mailing lists), delivery reports (\`multipart/report\`, \`Return-Path: <>\`, MAILER-DAEMON), and mail carrying our own Message-ID domain.
* A Message-ID already received is answered \`outcome: duplicate\` and changes nothing. Attachments are not kept.
* Limited per sender address and workspace (RATE_LIMIT_PER_IP a minute, 429).`

/** The intake address of each workspace (dashboard: the token and its rotation; public: the receiving route). */
export const inboundEmailModule = (ctx: AppContext) =>
  new Elysia()
    .use(authPlugin(ctx))
    .post('/inbound/email/:token', async ({ params, body, set }) => {
      const workspace = await workspaceByIntakeToken(ctx.db, params.token)
      return receiveEmail(ctx, workspace, body as Uint8Array, set.headers as Record<string, string | number>)
    }, {
      params: InboundTokenParams,
      // The raw message is this route's own body type: refused by type (415) and size (413) before it is read whole.
      parse: ({ request }) => {
        const contentType = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase()
        if (contentType !== 'message/rfc822') throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the raw message as Content-Type: message/rfc822')
        return readBodyCapped(request, INBOUND_EMAIL_LIMIT)
      },
      response: { 200: InboundEmailResult },
      detail: {
        operationId: 'receiveInboundEmail',
        tags,
        security: [],
        summary: 'Receive an e-mail sent to a workspace intake address',
        description: RECEIVE_DESCRIPTION,
        requestBody: {
          required: true,
          content: { 'message/rfc822': { schema: { type: 'string', description: 'The raw message, headers and body', examples: ['From: Ada <ada@example.com>\r\nTo: 0f8c2d1e9a7b4c3d5e6f708192a3b4c5@in.chorus.example.com\r\nSubject: Dark mode\r\nMessage-ID: <1@example.com>\r\n\r\nPlease add a dark mode.\r\n'] } } },
        },
      },
    })
    .post('/workspaces/:workspace_slug/email-intake/rotate-token', async ({ workspace }) => {
      const updated = await rotateIntakeToken(ctx.db, workspace.id)
      return { email_intake_token: updated.emailIntakeToken, email_intake_address: intakeAddress(updated.emailIntakeToken, ctx.config.inboundEmailDomain) }
    }, {
      params: WorkspaceSlugParams,
      workspace: { role: 'admin' },
      response: { 200: IntakeTokenResponse },
      detail: { operationId: 'rotateEmailIntakeToken', tags, summary: 'Give the workspace a new intake address (admin, dashboard only)', description: 'The previous address stops at once: mail to it is 404 from this response on. The token is also shown to admins as `email_intake_token` on WorkspaceResponse.' },
    })
