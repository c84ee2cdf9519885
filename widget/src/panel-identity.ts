// The panel's end user: a user the host page identified (its JWT), a visitor remembered from an earlier
// write, or an address typed into a form. `write` acts as them; a typed address is confirmed through a
// claim whose link, opened on any device, gives this panel a confirmed session.
import type { Words } from './i18n.ts'
import { visitorStore, type HttpError, type publicApi, type Visitor } from './public-api.ts'
import type { Session } from './types.ts'

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface IdentityContext {
  workspace: string
  lang: string
  t(key: keyof Words, arg?: string): string
  request: ReturnType<typeof publicApi>['request']
  /** The form parts that say who is writing, and where errors and notices go. */
  fields: { email: HTMLInputElement; emailField: HTMLElement; who: HTMLElement; notYou: HTMLElement; error: HTMLElement; notice: HTMLElement }
  /**
   * A claim was confirmed: the panel lists again, so the visitor's votes show as theirs. Awaited before the
   * write that waited for the claim is repeated: a list answered after that write rendered its vote as not cast.
   */
  confirmed(): Promise<void>
}

export function panelIdentity(context: IdentityContext) {
  const { t, lang, request, fields: { email, emailField, who, notYou, error, notice } } = context
  const visitors = visitorStore(context.workspace)
  let identified: Session | null = null
  let visitor = visitors.recall()
  let anonymousAllowed = true
  let claiming: string | undefined

  function remember(next: Visitor | null) {
    visitor = next
    visitors.keep(next)
    showWho()
  }
  const bearer = () => identified?.token ?? visitor?.token

  function showWho() {
    const anonymous = !identified && !visitor
    emailField.hidden = !anonymous || !anonymousAllowed
    email.required = !emailField.hidden
    notYou.hidden = Boolean(identified) || !visitor
    who.textContent = identified
      ? t('postingAs', identified.user.name ?? identified.user.email ?? '')
      : visitor
        ? `${t('postingAs', visitor.email)}${visitor.verified === false ? ` (${t('unconfirmed')})` : ''}`
        : anonymousAllowed ? '' : t('signIn')
  }

  /**
   * An end-user write. Anonymous visitors name themselves by e-mail once; the session the answer
   * carries is kept so later visits act (and see their votes) as the same visitor, and the claim it may
   * carry is followed: once the link in the e-mail is opened (in any tab), this panel gets a confirmed
   * session and goes on with it. A remembered session that ended (the address was confirmed elsewhere)
   * becomes a "confirm on this device" claim, never a silent reset.
   */
  async function write<T>(path: string, payload: Record<string, unknown>, needEmail: keyof Words): Promise<T | undefined> {
    const token = bearer()
    let address: string | undefined
    if (!token) {
      if (!anonymousAllowed) {
        error.textContent = t('signIn')
        return
      }
      address = email.value.trim()
      if (!EMAIL.test(address)) {
        error.textContent = t(needEmail)
        email.focus()
        return
      }
    }
    try {
      // `locale`: e-mail about the post comes in the language this panel speaks.
      const { data, response } = await request<T>(path, { ...payload, ...(address && { email: address }), locale: lang })
      const issued = response.headers.get('chorus-session-token')
      const claimId = response.headers.get('chorus-claim-id')
      if (!identified && (issued || visitor)) {
        remember({
          token: issued ?? visitor!.token, expires: response.headers.get('chorus-session-expires') ?? visitor?.expires, email: address ?? visitor!.email,
          // An anonymous write's session is always unconfirmed: a confirmed one comes from a claim.
          verified: issued ? false : visitor?.verified,
          ...(claimId ? { claim: claimId, claimExpires: response.headers.get('chorus-claim-expires') ?? undefined } : { claim: visitor?.claim, claimExpires: visitor?.claimExpires }),
        })
      }
      if (address) {
        notice.textContent = t('confirm', address)
        // A write answers a claim once a day per address; a visitor on another device asks for their own link.
        if (claimId) void follow(claimId, address)
        else void request<{ claim_id: string; expires_at: string }>('/visitors', { email: address }).then(({ data }) => {
          if (visitor) remember({ ...visitor, claim: data.claim_id, claimExpires: data.expires_at })
          return follow(data.claim_id, address)
        }, () => undefined)
      }
      return data
    } catch (failure) {
      if ((failure as HttpError).status !== 401 || identified) throw failure
      const who = address ?? visitor?.email
      if (!who) throw failure
      // The session ended because the address was confirmed (here or elsewhere): the claim this panel
      // follows brings a confirmed one once its link is opened on this device; say so, then carry on.
      if (token && following) {
        notice.textContent = t('claim', who)
        if (await following) return write<T>(path, payload, needEmail)
      }
      return claim(who, () => write<T>(path, payload, needEmail))
    }
  }

  /** Asks for a link for `address` (a claim), waits until it is opened, then repeats the write. */
  async function claim<T>(address: string, retry: () => Promise<T | undefined>): Promise<T | undefined> {
    if (claiming === address) return
    claiming = address
    try {
      const started = (await request<{ claim_id: string }>('/visitors', { email: address })).data
      notice.textContent = t('claim', address)
      if (await follow(started.claim_id, address)) return retry()
    } finally {
      claiming = undefined
    }
  }

  let following: Promise<boolean> | undefined
  /**
   * Polls a claim until its link is opened (on any device), then keeps the confirmed session it gives;
   * false if it never is. Every 1.5 s for a minute, then every 5 s, for 15 minutes (the claim lasts an
   * hour); a refused poll (429, a network error) is tried again, an unknown or used claim (404) ends it.
   */
  function follow(claimId: string, address: string): Promise<boolean> {
    following = (async () => {
      for (let i = 0; i < 40 + 168; i++) {
        await sleep(i < 40 ? 1500 : 5000)
        try {
          const { data, response } = await request<{ status: string; session_token?: string; session_expires_at?: string }>(`/visitors/${encodeURIComponent(claimId)}`)
          if (response.status === 200 && data.status === 'confirmed' && data.session_token) {
            remember({ token: data.session_token, expires: data.session_expires_at, email: address, verified: true })
            notice.textContent = t('claimed')
            // List again with the confirmed session: the visitor's votes show as theirs.
            await context.confirmed()
            return true
          }
        } catch (failure) {
          if ((failure as HttpError).status !== 404) continue
          // Unknown, used or expired: stop following it after a reload too.
          if (visitor?.claim === claimId) remember({ ...visitor, claim: undefined, claimExpires: undefined })
          return false
        }
      }
      return false
    })()
    return following
  }

  return {
    bearer,
    write,
    showWho,
    identified: () => identified,
    identify(session: Session | null) {
      identified = session
      showWho()
    },
    allowAnonymous(allowed: boolean) {
      anonymousAllowed = allowed
    },
    forget: () => remember(null),
    /** A claim started before a reload: followed until its link is opened or it expires. */
    resume() {
      if (visitor?.claim && visitor.verified === false && !(visitor.claimExpires && Date.parse(visitor.claimExpires) < Date.now())) void follow(visitor.claim, visitor.email)
    },
  }
}
