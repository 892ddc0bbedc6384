// Agent releases (docs/updates.md): what an operator signs, what the server stores and hands
// out, and what a box checks before it runs anything new. The signature is Ed25519 over the
// canonical form of the manifest; the private key stays with the operator, the box holds the
// public key it was provisioned with. One implementation, used by the CLI (signing), the
// server (upload checks) and the agent (verification).
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import Type, { type Static } from 'typebox';

export const ReleaseManifest = Type.Object({
  /** Dotted numeric version, e.g. 0.2.0 (compared part by part: compareVersions). */
  version: Type.String({ pattern: '^[0-9]{1,6}(\\.[0-9]{1,6}){0,3}$', maxLength: 40 }),
  /** `linux-x64`, `linux-arm64`, … (node's platform-arch) or `any` for a release in JavaScript only. */
  platform: Type.String({ pattern: '^(any|[a-z0-9]{1,16}-[a-z0-9]{1,16})$', maxLength: 33 }),
  /** Bytes of the release tarball. */
  size: Type.Integer({ minimum: 1 }),
  /** SHA-256 of the release tarball, lowercase hex. */
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  /** The file node runs, relative to the unpacked tarball: `package/bin/boxhub.mjs` for `npm pack`. */
  entry: Type.String({ pattern: '^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$', maxLength: 200 }),
});
export type ReleaseManifest = Static<typeof ReleaseManifest>;

/** The bytes signed: the manifest's fields in a fixed order, nothing else. */
export function canonicalManifest(m: ReleaseManifest): Buffer {
  return Buffer.from(
    JSON.stringify({ version: m.version, platform: m.platform, size: m.size, sha256: m.sha256, entry: m.entry }),
  );
}

/** A new Ed25519 key pair as PEM (private: PKCS#8, public: SPKI). */
export function newReleaseKeys(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** The signature of a manifest, base64. Throws when the key is not an Ed25519 private key. */
export function signManifest(privateKeyPem: string, m: ReleaseManifest): string {
  const key = createPrivateKey(privateKeyPem);
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(`the signing key is ${key.asymmetricKeyType ?? 'not asymmetric'}, not Ed25519`);
  return sign(null, canonicalManifest(m), key).toString('base64');
}

/** Whether `signature` (base64) is the key's signature of this manifest. */
export function verifyManifest(publicKeyPem: string, m: ReleaseManifest, signature: string): boolean {
  const key = createPublicKey(publicKeyPem);
  if (key.asymmetricKeyType !== 'ed25519') return false;
  const sig = Buffer.from(signature, 'base64');
  if (sig.length !== 64) return false;
  return verify(null, canonicalManifest(m), key, sig);
}

/** The public key of a private key, PEM (the CLI prints it for provisioning). */
export function publicKeyOf(privateKeyPem: string): string {
  return createPublicKey(createPrivateKey(privateKeyPem)).export({ type: 'spki', format: 'pem' }).toString();
}

export function sha256Hex(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Negative when a < b, 0 when equal, positive when a > b; missing parts count as 0 (1.2 = 1.2.0). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether a release for `platform` runs on this box (`linux-x64` etc., from node). */
export function platformMatches(platform: string, box: string = `${process.platform}-${process.arch}`): boolean {
  return platform === 'any' || platform === box;
}

/** `agent.update` (server → box): install this release (docs/updates.md, "What a box does"). */
export const AgentUpdateParams = Type.Object({
  /** The release's id on the server (reported back with the outcome). */
  release: Type.String({ minLength: 1, maxLength: 64 }),
  /** A signed download URL of the tarball (supports Range, so a broken download resumes). */
  url: Type.String({ minLength: 1, maxLength: 4096 }),
  manifest: ReleaseManifest,
  /** Base64 Ed25519 signature of the canonical manifest. */
  signature: Type.String({ minLength: 1, maxLength: 200 }),
  /** Install even when the release is older than the one running. */
  downgrade: Type.Optional(Type.Boolean()),
});
export type AgentUpdateParams = Static<typeof AgentUpdateParams>;

/** What became of the last update, as the box reports it in its state (`update`). */
export const UpdateOutcome = ['installing', 'updated', 'rolled_back', 'refused', 'failed', 'interrupted'] as const;
export type UpdateOutcome = (typeof UpdateOutcome)[number];

export const UpdateReport = Type.Object({
  release: Type.Optional(Type.String({ maxLength: 64 })),
  /** The version the update was to. */
  version: Type.String({ maxLength: 40 }),
  outcome: Type.Union([
    Type.Literal('installing'),
    Type.Literal('updated'),
    Type.Literal('rolled_back'),
    Type.Literal('refused'),
    Type.Literal('failed'),
    Type.Literal('interrupted'),
  ]),
  /** Why it was refused, failed or rolled back. */
  reason: Type.Optional(Type.String({ maxLength: 512 })),
  /** Box clock, Unix ms. */
  at: Type.Integer({ minimum: 0 }),
});
export type UpdateReport = Static<typeof UpdateReport>;
