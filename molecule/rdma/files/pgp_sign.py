#!/usr/bin/env python3
"""Throw-away OpenPGP signing for the stand-in DOCA repository (Molecule scenario molecule/rdma only).

Usage: pgp_sign.py RELEASE KEY_ASC SIGNATURE
Makes a fresh ed25519 key (RFC 4880 v4 packets, the EdDSA/Ed25519 form GnuPG 2.2 uses), writes its
public key, user ID and self-signature ASCII-armoured to KEY_ASC, and an armoured detached signature
of RELEASE to SIGNATURE (apt's Release.gpg). Only needs the ``cryptography`` package Ansible already
depends on, so the controller needs no gpg; apt checks the result inside the container with gpgv.
"""

from __future__ import annotations

import base64
import hashlib
import struct
import sys
import time

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ED25519_OID = bytes.fromhex("2b06010401da470f01")  # 1.3.6.1.4.1.11591.15.1
UID = b"clusterctl stand-in DOCA repository (test only) <noreply@invalid>"


def mpi(data: bytes) -> bytes:
    n = int.from_bytes(data, "big")
    return struct.pack(">H", n.bit_length()) + n.to_bytes((n.bit_length() + 7) // 8, "big")


def packet(tag: int, body: bytes) -> bytes:
    """New-format packet header (RFC 4880 4.2.2)."""
    n = len(body)
    if n < 192:
        length = bytes([n])
    elif n < 8384:
        length = bytes([((n - 192) >> 8) + 192, (n - 192) & 0xFF])
    else:
        length = b"\xff" + struct.pack(">I", n)
    return bytes([0xC0 | tag]) + length + body


def subpacket(kind: int, data: bytes) -> bytes:
    return bytes([len(data) + 1, kind]) + data


def crc24(data: bytes) -> int:
    crc = 0xB704CE
    for byte in data:
        crc ^= byte << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def armor(kind: str, data: bytes) -> str:
    b64 = base64.b64encode(data).decode()
    lines = [b64[i : i + 64] for i in range(0, len(b64), 64)]
    crc = base64.b64encode(crc24(data).to_bytes(3, "big")).decode()
    return "\n".join([f"-----BEGIN PGP {kind}-----", "", *lines, f"={crc}", f"-----END PGP {kind}-----", ""])


def main(release: str, key_asc: str, signature: str) -> int:
    key = Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    created = struct.pack(">I", int(time.time()) - 60)
    pub = b"\x04" + created + b"\x16" + bytes([len(ED25519_OID)]) + ED25519_OID + mpi(b"\x40" + raw)
    pub_hashed = b"\x99" + struct.pack(">H", len(pub)) + pub
    fingerprint = hashlib.sha1(pub_hashed).digest()  # the v4 fingerprint is SHA-1 by definition

    def sign(sig_type: int, data: bytes, extra: bytes = b"") -> bytes:
        hashed = subpacket(2, created) + subpacket(33, b"\x04" + fingerprint) + extra
        head = bytes([4, sig_type, 22, 8]) + struct.pack(">H", len(hashed)) + hashed  # EdDSA, SHA-256
        digest = hashlib.sha256(data + head + b"\x04\xff" + struct.pack(">I", len(head))).digest()
        sig = key.sign(digest)  # EdDSA in OpenPGP signs the hash value
        unhashed = subpacket(16, fingerprint[-8:])
        body = head + struct.pack(">H", len(unhashed)) + unhashed + digest[:2] + mpi(sig[:32]) + mpi(sig[32:])
        return packet(2, body)

    uid_hashed = b"\xb4" + struct.pack(">I", len(UID)) + UID
    selfsig = sign(0x13, pub_hashed + uid_hashed, subpacket(27, b"\x03"))  # positive cert; certify + sign
    with open(key_asc, "w", encoding="ascii") as text:
        text.write(armor("PUBLIC KEY BLOCK", packet(6, pub) + packet(13, UID) + selfsig))
    with open(release, "rb") as src:
        detached = sign(0x00, src.read())
    with open(signature, "w", encoding="ascii") as sig_text:
        sig_text.write(armor("SIGNATURE", detached))  # apt wants Release.gpg armoured
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
