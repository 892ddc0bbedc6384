// AWS Signature Version 4 for S3 (AWS S3 API reference, "Authenticating Requests (AWS Signature
// Version 4)": the Authorization header form and the query-parameter form of presigned URLs).
//
// The signer is aws4fetch (MIT, 96 KB, no dependencies): it builds the canonical request (the
// part of SigV4 that is easy to get wrong: URI and query encoding, header canonicalisation,
// ordering), and computes exactly the signatures AWS's published examples give
// (storage/sigv4.test.ts) and the AWS SDK's presigner (docs/storage.md). We do not use the SDK
// itself: it is 22 MB in 27 packages for the six S3 calls we make, and since v3.729 it adds
// CRC32 checksums by default, which S3-compatible stores (Cloudflare R2, Backblaze B2, MinIO,
// OVH) refused until told WHEN_REQUIRED. aws4fetch only signs; the requests themselves go over
// undici (s3-client.ts).
//
// One part is ours: the last step (string to sign, signing key, HMAC) runs on node:crypto instead
// of aws4fetch's WebCrypto, where each of the six HMACs and digests is an asynchronous call:
// 150-310 µs of CPU per presigned URL that way, 30-60 µs this way, measured side by side on this
// machine (bench/storage.bench.ts compares it with the local store's HMAC).
import { createHash, createHmac } from 'node:crypto';
import { AwsV4Signer } from 'aws4fetch';

export interface SigV4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

/** S3 refuses presigned URLs valid for longer than 7 days (X-Amz-Expires ≤ 604800). */
export const MAX_PRESIGN_SECONDS = 604_800;

/** The ISO 8601 basic form SigV4 dates are in: 20130524T000000Z. */
export function amzDate(ms: number): string {
  return new Date(ms).toISOString().replace(/[:-]|\.\d{3}/g, '');
}

/** aws4fetch's signer with the final step (AWS SigV4 "Calculate the signature") on node:crypto. */
class NodeCryptoSigner extends AwsV4Signer {
  keys!: Map<string, Buffer>;

  override async signature(): Promise<string> {
    const date = this.datetime.slice(0, 8);
    // The signing key depends only on the day, region and service (four chained HMACs): kept per
    // day, a few days at most.
    const id = `${date}/${this.region}/${this.service}`;
    let key = this.keys.get(id);
    if (!key) {
      if (this.keys.size > 4) this.keys.clear();
      const mac = (k: string | Buffer, data: string) => createHmac('sha256', k).update(data).digest();
      key = mac(mac(mac(mac(`AWS4${this.secretAccessKey}`, date), this.region), this.service), 'aws4_request');
      this.keys.set(id, key);
    }
    const stringToSign = [
      'AWS4-HMAC-SHA256',
      this.datetime,
      this.credentialString,
      createHash('sha256')
        .update(await this.canonicalString())
        .digest('hex'),
    ].join('\n');
    return createHmac('sha256', key).update(stringToSign).digest('hex');
  }
}

export class SigV4 {
  readonly #creds: SigV4Credentials;
  readonly #keys = new Map<string, Buffer>();

  constructor(creds: SigV4Credentials) {
    this.#creds = creds;
  }

  get accessKeyId(): string {
    return this.#creds.accessKeyId;
  }

  /**
   * A presigned URL: `url` already carries every query parameter to sign (response-* overrides);
   * `headers` are signed too and must then be sent exactly so by whoever uses the URL.
   */
  async presign(
    method: string,
    url: URL,
    o: { headers?: Record<string, string>; at: number; expiresSec: number },
  ): Promise<string> {
    if (!Number.isInteger(o.expiresSec) || o.expiresSec < 1 || o.expiresSec > MAX_PRESIGN_SECONDS) {
      throw new RangeError(`a presigned URL lasts 1 to ${MAX_PRESIGN_SECONDS} seconds, not ${o.expiresSec}`);
    }
    const u = new URL(url);
    u.searchParams.set('X-Amz-Expires', String(o.expiresSec));
    const signed = await this.signer(method, u, o.headers ?? {}, o.at, true).sign();
    return signed.url.toString();
  }

  /**
   * Headers for a request signed in the Authorization header. The payload is not hashed
   * (x-amz-content-sha256: UNSIGNED-PAYLOAD, which S3 accepts): bodies are streamed, and
   * Content-MD5 is what makes S3 check the bytes.
   */
  async sign(method: string, url: URL, headers: Record<string, string>, at: number): Promise<Record<string, string>> {
    const signed = await this.signer(
      method,
      url,
      { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers },
      at,
      false,
    ).sign();
    return Object.fromEntries(signed.headers.entries());
  }

  private signer(
    method: string,
    url: URL,
    headers: Record<string, string>,
    at: number,
    signQuery: boolean,
  ): AwsV4Signer {
    const s = new NodeCryptoSigner({
      method,
      url: url.toString(),
      headers,
      accessKeyId: this.#creds.accessKeyId,
      secretAccessKey: this.#creds.secretAccessKey,
      service: 's3',
      region: this.#creds.region,
      datetime: amzDate(at),
      // Every header we pass is one the request must carry as given, Content-Type and
      // Content-Length included (aws4fetch leaves those two out unless told).
      allHeaders: true,
      signQuery,
    });
    s.keys = this.#keys;
    return s;
  }

  /** Keeps the secret out of logs and inspection. */
  toJSON(): Record<string, string> {
    return { accessKeyId: this.#creds.accessKeyId, region: this.#creds.region };
  }
}
