export * from './accounts.ts'
export * from './workspaces.ts'
