export * from './accounts.ts'
export * from './workspaces.ts'
export * from './feedback.ts'
export * from './end-users.ts'
