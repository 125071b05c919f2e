/**
 * Real-shaped fake credentials, built at run time from pieces so that no secret scanner flags the repository. None
 * of them is valid anywhere.
 */
const join = (...parts: string[]): string => parts.join('');
const run = (alphabet: string, n: number, seed = 7): string => {
  let out = '';
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += alphabet[x % alphabet.length];
  }
  return out;
};
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const B64 = `${ALNUM}+/`;

/** kind → a fake token of that shape. */
export function fakeSecrets(): Record<string, string> {
  return {
    'github-token': join('gh', 'p_', run(ALNUM, 36, 1)),
    'github-pat': join('github', '_pat_', run(ALNUM, 22, 2), '_', run(ALNUM, 59, 3)),
    'gitlab-token': join('gl', 'pat-', run(ALNUM, 20, 4)),
    'npm-token': join('np', 'm_', run(ALNUM, 36, 5)),
    'pypi-token': join('py', 'pi-', 'AgEIcHlwaS5vcmc', run(ALNUM, 60, 6)),
    'slack-token': join('xo', 'xb-', '1234567890-', run(ALNUM, 24, 7)),
    'stripe-key': join('sk', '_live_', run(ALNUM, 24, 8)),
    'openai-key': join('sk', '-proj-', run(ALNUM, 48, 9)),
    'anthropic-key': join('sk', '-ant-', 'api03-', run(ALNUM, 60, 10)),
    'google-api-key': join('AI', 'za', run(ALNUM, 35, 11)),
    'aws-access-key-id': join('AK', 'IA', run(UPPER, 16, 12)),
    jwt: join('ey', 'JhbGciOiJIUzI1NiJ9', '.', 'ey', 'JzdWIiOiIxMjM0NTY3ODkwIn0', '.', run(ALNUM, 43, 13)),
  };
}

/** An AWS secret access key assignment, the way a credentials file writes it; the key alone is `key`. */
export function fakeAwsSecret(): { line: string; key: string } {
  const key = run(B64, 40, 14);
  return { line: join('aws_secret', '_access_key = ', key), key };
}

/** A PEM private key block (and the same as a JSON-escaped GCP service-account field). */
export function fakePrivateKey(): { pem: string; json: string } {
  const body = Array.from({ length: 12 }, (_, i) => run(B64, 64, 20 + i)).join('\n');
  const kind = join('PRIV', 'ATE KEY');
  const pem = `-----BEGIN ${kind}-----\n${body}\n-----END ${kind}-----`;
  return { pem, json: `{"type": "service_account", "private_key": ${JSON.stringify(pem + '\n')}, "client_email": "x@y.iam.gserviceaccount.com"}` };
}

/** A PGP private key block, as `gpg --export-secret-keys --armor` prints it. */
export function fakePgpPrivateKey(): string {
  const body = Array.from({ length: 8 }, (_, i) => run(B64, 64, 40 + i)).join('\n');
  const kind = join('PGP PRIV', 'ATE KEY BLOCK');
  return `-----BEGIN ${kind}-----\n\n${body}\n=${run(B64, 4, 49)}\n-----END ${kind}-----`;
}

/** The JSON `aws sts assume-role` prints: an access key id, a secret access key and a session token. */
export function fakeAwsStsJson(): { json: string; secret: string; session: string } {
  const secret = run(B64, 40, 50);
  const session = join('IQoJb3JpZ2luX2Vj', run(B64, 300, 51), '==');
  const json = JSON.stringify({ Credentials: { AccessKeyId: join('AS', 'IA', run(UPPER, 16, 52)), SecretAccessKey: secret, SessionToken: session, Expiration: '2026-12-07T08:00:00Z' } }, null, 4);
  return { json, secret, session };
}
