#!/usr/bin/env python3
"""boxhub end-to-end encryption (scheme boxhub-e2e-v1, docs/encryption.md) in Python.

Decrypts a scan item the box encrypted to the application's key, and encrypts a print file to
a box's key. Needs only the `cryptography` package (Debian 12's python3-cryptography 38 is
enough): HPKE (RFC 9180) base mode with DHKEM(X25519, HKDF-SHA256), HKDF-SHA256 and
AES-256-GCM is written out here from cryptography's X25519, HMAC-SHA256 and AES-GCM, step by
step as RFC 9180 sections 4, 5.1 and 7.1 give it. This is an independent implementation of the
HPKE the service uses (@hpke/core in Node); where cryptography >= 47 has its own
`hazmat.primitives.hpke`, `selftest` also checks the two agree.

  boxhub_e2e.py decrypt-scan  --private-key HEX --scan-uuid U --item-id N --cipher HEX IN OUT
  boxhub_e2e.py encrypt-print --public-key HEX --client-uuid U IN OUT     (prints the cipher)
  boxhub_e2e.py keygen                                                     (prints private, public)
  boxhub_e2e.py selftest VECTORS.json
"""
import hashlib
import hmac
import json
import os
import sys

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives import serialization

RAW = serialization.Encoding.Raw

# RFC 9180 section 7: KEM 0x0020 DHKEM(X25519, HKDF-SHA256), KDF 0x0001, AEAD 0x0002 AES-256-GCM.
KEM_ID, KDF_ID = 0x0020, 0x0001
NSECRET, NENC, NH = 32, 32, 32


def scan_info(scan_uuid, item_id):
    return f"boxhub/e2e/v1 scan {scan_uuid} {item_id}".encode()


def print_info(client_uuid):
    return f"boxhub/e2e/v1 print {client_uuid}".encode()


def _extract(salt, ikm):
    return hmac.new(salt or b"\0" * NH, ikm, hashlib.sha256).digest()


def _expand(prk, info, length):
    out, t, i = b"", b"", 1
    while len(out) < length:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        out += t
        i += 1
    return out[:length]


def _labeled_extract(suite_id, salt, label, ikm):
    return _extract(salt, b"HPKE-v1" + suite_id + label + ikm)


def _labeled_expand(suite_id, prk, label, info, length):
    return _expand(prk, length.to_bytes(2, "big") + b"HPKE-v1" + suite_id + label + info, length)


KEM_SUITE = b"KEM" + KEM_ID.to_bytes(2, "big")


def _hpke_suite(aead_id):
    return b"HPKE" + KEM_ID.to_bytes(2, "big") + KDF_ID.to_bytes(2, "big") + aead_id.to_bytes(2, "big")


def derive_key_pair(ikm):
    """RFC 9180 7.1.3 DeriveKeyPair for X25519 (the private key is the expanded bytes as they are)."""
    prk = _labeled_extract(KEM_SUITE, b"", b"dkp_prk", ikm)
    sk = X25519PrivateKey.from_private_bytes(_labeled_expand(KEM_SUITE, prk, b"sk", b"", 32))
    return sk, sk.public_key()


def _pub_bytes(pk):
    return pk.public_bytes(RAW, serialization.PublicFormat.Raw)


def _extract_and_expand(dh, kem_context):
    prk = _labeled_extract(KEM_SUITE, b"", b"eae_prk", dh)
    return _labeled_expand(KEM_SUITE, prk, b"shared_secret", kem_context, NSECRET)


def _key_schedule(shared_secret, info, aead_id, nk):
    """RFC 9180 5.1, mode_base (0x00), no PSK."""
    sid = _hpke_suite(aead_id)
    psk_id_hash = _labeled_extract(sid, b"", b"psk_id_hash", b"")
    info_hash = _labeled_extract(sid, b"", b"info_hash", info)
    context = b"\x00" + psk_id_hash + info_hash
    secret = _labeled_extract(sid, shared_secret, b"secret", b"")
    key = _labeled_expand(sid, secret, b"key", context, nk)
    base_nonce = _labeled_expand(sid, secret, b"base_nonce", context, 12)
    return key, base_nonce


def hpke_seal(pk_r_bytes, info, plaintext, aad=b"", ikm_e=None, aead_id=0x0002, nk=32):
    """Single-shot SealBase: (enc, ct). ikm_e fixes the ephemeral key (test vectors only)."""
    sk_e, pk_e = derive_key_pair(ikm_e) if ikm_e is not None else (lambda k: (k, k.public_key()))(X25519PrivateKey.generate())
    pk_r = X25519PublicKey.from_public_bytes(pk_r_bytes)
    enc = _pub_bytes(pk_e)
    shared = _extract_and_expand(sk_e.exchange(pk_r), enc + pk_r_bytes)
    key, nonce = _key_schedule(shared, info, aead_id, nk)
    return enc, AESGCM(key).encrypt(nonce, plaintext, aad)  # sequence number 0: nonce = base_nonce


def hpke_open(sk_r_bytes, enc, info, ct, aad=b"", aead_id=0x0002, nk=32):
    sk_r = X25519PrivateKey.from_private_bytes(sk_r_bytes)
    pk_r_bytes = _pub_bytes(sk_r.public_key())
    shared = _extract_and_expand(sk_r.exchange(X25519PublicKey.from_public_bytes(enc)), enc + pk_r_bytes)
    key, nonce = _key_schedule(shared, info, aead_id, nk)
    return AESGCM(key).decrypt(nonce, ct, aad)


# ---- the boxhub-e2e-v1 layer: a content key sealed by HPKE, the file under AES-256-GCM ----

def unwrap(sk_r_bytes, info, cipher_hex):
    c = bytes.fromhex(cipher_hex)
    if len(c) != 80:
        raise ValueError("a boxhub cipher is 160 hex digits")
    return hpke_open(sk_r_bytes, c[:32], info, c[32:])


def wrap(pk_r_bytes, info, content_key, ikm_e=None):
    enc, ct = hpke_seal(pk_r_bytes, info, content_key, ikm_e=ikm_e)
    return (enc + ct).hex()


def open_file(content_key, data):
    """nonce(12) ‖ ciphertext ‖ tag(16): AESGCM takes ciphertext ‖ tag as one."""
    return AESGCM(content_key).decrypt(data[:12], data[12:], None)


def seal_file(content_key, plaintext, nonce=None):
    nonce = nonce if nonce is not None else os.urandom(12)
    return nonce + AESGCM(content_key).encrypt(nonce, plaintext, None)


def selftest(path):
    v = json.load(open(path))
    # RFC 9180 A.1.1 (AES-128-GCM, aead 0x0001): this HPKE against the RFC's published values.
    a = v["rfc9180_a_1_1"]
    enc, ct = hpke_seal(bytes.fromhex(a["pkRm"]), bytes.fromhex(a["info"]), bytes.fromhex(a["pt"]),
                        aad=bytes.fromhex(a["aad"]), ikm_e=bytes.fromhex(a["ikmE"]), aead_id=0x0001, nk=16)
    assert enc.hex() == a["enc"], "RFC 9180 A.1.1 enc"
    assert ct.hex() == a["ct"], "RFC 9180 A.1.1 ct"
    sk, pk = derive_key_pair(bytes.fromhex(a["ikmR"]))
    assert sk.private_bytes(RAW, serialization.PrivateFormat.Raw, serialization.NoEncryption()).hex() == a["skRm"]
    # The worked example of docs/encryption.md: every byte reproduced.
    w = v["example"]
    info = w["info"].encode()
    cipher = wrap(bytes.fromhex(w["public_key"]), info, bytes.fromhex(w["content_key"]), ikm_e=bytes.fromhex(w["ikmE"]))
    assert cipher == w["cipher"], "example cipher"
    assert seal_file(bytes.fromhex(w["content_key"]), bytes.fromhex(w["plaintext"]), bytes.fromhex(w["nonce"])).hex() == w["file"], "example file"
    key = unwrap(bytes.fromhex(w["private_key"]), info, w["cipher"])
    assert open_file(key, bytes.fromhex(w["file"])).hex() == w["plaintext"]
    checked = ["rfc9180 a.1.1", "example"]
    try:
        from cryptography.hazmat.primitives import hpke  # cryptography >= 47
    except ImportError:
        hpke = None
    if hpke is not None:
        suite = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)
        sk_r = X25519PrivateKey.from_private_bytes(bytes.fromhex(w["private_key"]))
        assert suite.decrypt(bytes.fromhex(w["cipher"]), sk_r, info=info).hex() == w["content_key"]
        mine = suite.encrypt(b"k" * 32, sk_r.public_key(), info=info)
        assert unwrap(bytes.fromhex(w["private_key"]), info, mine.hex()) == b"k" * 32
        checked.append("cryptography.hpke")
    print("ok", " ".join(checked))


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    cmd, args = argv[0], argv[1:]
    opts, pos = {}, []
    while args:
        a = args.pop(0)
        if a.startswith("--"):
            opts[a[2:]] = args.pop(0)
        else:
            pos.append(a)
    if cmd == "decrypt-scan":
        key = unwrap(bytes.fromhex(opts["private-key"]), scan_info(opts["scan-uuid"], int(opts["item-id"])), opts["cipher"])
        with open(pos[0], "rb") as f:
            plain = open_file(key, f.read())
        with open(pos[1], "wb") as f:
            f.write(plain)
        print(len(plain))
    elif cmd == "encrypt-print":
        key = os.urandom(32)
        with open(pos[0], "rb") as f:
            data = seal_file(key, f.read())
        with open(pos[1], "wb") as f:
            f.write(data)
        print(wrap(bytes.fromhex(opts["public-key"]), print_info(opts["client-uuid"]), key))
    elif cmd == "keygen":
        sk = X25519PrivateKey.generate()
        print(sk.private_bytes(RAW, serialization.PrivateFormat.Raw, serialization.NoEncryption()).hex(), _pub_bytes(sk.public_key()).hex())
    elif cmd == "selftest":
        selftest(pos[0])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
