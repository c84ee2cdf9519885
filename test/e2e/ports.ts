// Shared by playwright.config.ts (Node) and server.ts (Bun): keep it free of runtime-specific imports.
export const E2E_APP_PORT = Number(process.env.E2E_APP_PORT ?? 47_317)
export const E2E_HOST_PORT = Number(process.env.E2E_HOST_PORT ?? 47_318)
/** The Chorus server. The host page runs on another origin (another port), as a customer's site would. */
export const E2E_APP_ORIGIN = `http://127.0.0.1:${E2E_APP_PORT}`
export const E2E_HOST_ORIGIN = `http://127.0.0.1:${E2E_HOST_PORT}`
