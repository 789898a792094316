// A real OpenID Connect provider for the sign-in tests (npm package oidc-provider 9.x, OpenID Certified).
// Started by tests/oidc_server.py on 127.0.0.1 only, with the users and client it is given as JSON:
//   node provider.mjs CONFIG.json
// The login form is oidc-provider's development form (any password is accepted for a listed user):
// these tests check Luskin's side of the sign-in, not the provider's passwords.
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const settings = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const issuer = `http://127.0.0.1:${settings.port}`;
// The users are read again at each look-up: a test changes a user's groups at the provider while it runs.
const users = () => JSON.parse(readFileSync(process.argv[2], 'utf8')).users;

const provider = new Provider(issuer, {
  clients: [settings.client],
  pkce: { required: () => false },
  scopes: ['openid', 'email', 'profile', 'groups'],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
  conformIdTokenClaims: false,   // the scopes' claims in the ID token: Streamlit reads the user from it
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  cookies: { keys: ['luskin-tests-only'] },
  ttl: { AccessToken: settings.access_token_seconds || 3600 },
  async findAccount(ctx, id) {
    const user = users()[id];
    if (!user) return undefined;
    return { accountId: id, async claims() { return { sub: id, ...user }; } };
  },
  async loadExistingGrant(ctx) {   // no consent screen: the test client is trusted
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid email profile groups');
    grant.addOIDCClaims(['sub', 'email', 'email_verified', 'name', 'groups']);
    await grant.save();
    return grant;
  },
});
provider.listen(settings.port, '127.0.0.1', () => {
  console.log(`oidc-provider listening on ${issuer}`);
});
