// A recognition task's direct-transfer address (docs/cards.md): {public URL}/direct/{token},
// handed out by ess/create and given back as a scan's options.direct_addr, so it must keep to
// the URL rule of every direct_addr (@boxhub/protocol url-length.ts). The configuration checks
// the longest one its public URL makes (config.ts), so ess/create never answers an address
// that scan create would refuse.
import { randomBytes } from 'node:crypto';
import { urlChars } from '@boxhub/protocol';

/** The path of a recognition task's address. */
export const DIRECT_PATH = '/direct/';
/** A token: 32 random bytes, base64url (43 characters). */
export const DIRECT_TOKEN = /^[A-Za-z0-9_-]{43}$/;
const TOKEN_CHARS = 43;

export const newDirectToken = (): string => randomBytes(32).toString('base64url');

export const directAddress = (publicUrl: string, token: string): string => `${publicUrl}${DIRECT_PATH}${token}`;

/** The length of every address made on `publicUrl`, as the URL rule counts it. */
export const directAddressChars = (publicUrl: string): number =>
  urlChars(directAddress(publicUrl, 'x'.repeat(TOKEN_CHARS)));
