// oidc-provider ships no types; the test IdP uses a handful of its members.
declare module 'oidc-provider' {
  const Provider: any
  export default Provider
}
