/**
 * What a bearer token is checked against: the token itself, or only its SHA-256 digest (the verifier the extension
 * keeps so that it can check tokens while the token itself is still on its way from the system keychain).
 */
export type ExpectedSecret = string | { readonly sha256: Uint8Array };
