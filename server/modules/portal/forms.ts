import { Value } from '@sinclair/typebox/value'
import type { TSchema } from 'elysia'
import { ApiError } from '../../errors.ts'
import { PublicCommentCreate, PublicPostCreate, PublicVoteToggle } from '../end-users/model.ts'
import type { FormState } from './views.ts'

// The portal's forms are checked against the schemas of the widget's JSON routes, then go through the
// same write path; what fails comes back as a message for the page and the field to mark.

export type FormName = FormState['form']

const SCHEMAS: Record<FormName, TSchema> = { post: PublicPostCreate, comment: PublicCommentCreate, vote: PublicVoteToggle }
const FIELDS: Record<FormName, string[]> = { post: ['title', 'body', 'email'], comment: ['body', 'email'], vote: ['email'] }

const MESSAGES: Record<string, string> = {
  'post.title': 'Give your idea a title (at most 200 characters).',
  'post.body': 'Keep the details under 20,000 characters.',
  'comment.body': 'Write a comment (at most 10,000 characters).',
  email: 'Enter a valid e-mail address, like name@example.com.',
}

export class FormError extends Error {
  constructor(readonly status: number, message: string, readonly field?: string, readonly headers: Record<string, string> = {}) {
    super(message)
  }
}

/** The form's own fields as strings (a repeated field counts once); empty optional ones are left out. */
export function readForm(form: FormName, body: Record<string, unknown>, identified: boolean) {
  const values: Record<string, string> = {}
  for (const name of FIELDS[form]) {
    const raw = body[name]
    const value = typeof raw === 'string' ? raw : Array.isArray(raw) && typeof raw[0] === 'string' ? raw[0] : ''
    if (name === 'email' && identified) continue
    values[name] = name === 'email' ? value.trim() : value
  }
  return values
}

/** The input for the write service, or a FormError naming the first wrong field. */
export function checkForm(form: FormName, values: Record<string, string>, identified: boolean) {
  const input: Record<string, string> = {}
  for (const [name, value] of Object.entries(values)) if (value !== '' || name === 'title' || (form === 'comment' && name === 'body')) input[name] = value
  if (!identified && input.email === undefined) throw new FormError(422, MESSAGES.email!, 'email')
  const [issue] = Value.Errors(SCHEMAS[form], input)
  if (issue) {
    const name = issue.path.split('/')[1] ?? ''
    throw new FormError(422, MESSAGES[`${form}.${name}`] ?? MESSAGES[name] ?? 'Check the form and try again.', name)
  }
  return input
}

const FRIENDLY: Partial<Record<string, string>> = {
  RATE_LIMITED: 'Too many submissions from your network. Wait a minute and try again.',
  SUBSCRIPTION_INACTIVE: 'This portal is not taking new feedback right now.',
}

/** A write service's refusal as a message for the page (its own words where they are meant for people). */
export function formErrorOf(error: unknown): FormError {
  if (error instanceof FormError) return error
  if (!(error instanceof ApiError)) throw error
  const field = error.issues?.[0]?.loc[1]
  const message = FRIENDLY[error.code] ?? error.issues?.[0]?.msg ?? error.message
  return new FormError(error.status, message.endsWith('.') ? message : `${message}.`, typeof field === 'string' ? field : undefined, error.headers)
}
