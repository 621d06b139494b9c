"""The tokens SQLite FTS5 stores for a text, reproduced in Python, so that an engine other
than SQLite can rank with BM25 exactly as FTS5 does.

Contract: :func:`document_tokens` returns the tokens of FTS5's ``porter unicode61``
tokenizer (the documents, archived and passages indexes) and :func:`name_tokens` those of
``unicode61 remove_diacritics 2`` (the entities index): in order, as FTS5 stores them (case
folded, diacritics removed, and for documents stemmed). The text is given as FTS5 gets it,
so the caller applies :func:`memtrove.text.segment_cjk` first, as the indexer does; it must
be encodable as UTF-8 (no lone surrogates).

unicode61: a token starts at a token character and runs on over token characters and the
combining diacritics FTS5 knows (which never start a token); every other character
separates tokens. FTS5's Unicode tables are older than Python's ``unicodedata``: characters
they do not assign (many emoji among them) are token characters, and case folding and
diacritic removal follow their own table. The tables below were read from FTS5 itself
(SQLite 3.50.4) by tokenizing every code point; ``tests/db/test_text_tokens.py`` checks
them, and the whole tokenizer, against the running FTS5.

porter: FTS5's own Porter stemmer (not Snowball's, which differs), applied to the UTF-8
bytes of a token of 3 to 64 bytes; shorter and longer tokens pass unchanged. Bytes outside
ASCII count as consonants. In one rare case it cuts a multi-byte character in two (a token
ending in a character whose last two UTF-8 bytes are equal, after ``-ed`` or ``-ing`` is
removed): that token holds the broken bytes as surrogate escapes, as
``bytes.decode("utf-8", "surrogateescape")`` gives them. FTS5 keeps the first 32,768 bytes
of a longer token, and so does this module (again cutting a character if it falls there).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Sequence
from typing import NamedTuple

__all__ = ["TermNumbers", "Tokenized", "document_tokens", "name_tokens", "tokenized_rows"]

# Hexadecimal code points and ranges of them. _SEPARATORS: characters that end a token.
# _DIACRITICS: characters that continue a token but never start one (folded to nothing).
# _FOLD: ``code>delta`` (or ``first-last>delta``, ``first-last/step>delta``) maps a token
# character to the one FTS5 stores (case folded, diacritics removed as remove_diacritics 1
# does); _FOLD_COMPLEX overrides it for remove_diacritics 2.

_SEPARATORS = (
    "1-2f 3a-40 5b-60 7b-a9 ab-b1 b4 b6-b8 bb bf d7 f7 2c2-2c5 2d2-2df 2e5-2eb 2ed 2ef-2ff 305 "
    "30d-30e 310 312-31a 31c-322 329-32c 32f 332-36f 375 37e 384-385 387 3f6 482-489 55a-55f "
    "589-58a 58f 591-5c7 5f3-5f4 600-604 606-61b 61e-61f 64b-65f 66a-66d 670 6d4 6d6-6e4 "
    "6e7-6ed 6fd-6fe 700-70d 70f 711 730-74a 7a6-7b0 7eb-7f3 7f6-7f9 816-819 81b-823 825-827 "
    "829-82d 830-83e 859-85b 85e 8e4-8fe 900-903 93a-93c 93e-94f 951-957 962-965 970 981-983 "
    "9bc 9be-9c4 9c7-9c8 9cb-9cd 9d7 9e2-9e3 9f2-9f3 9fa-9fb a01-a03 a3c a3e-a42 a47-a48 "
    "a4b-a4d a51 a70-a71 a75 a81-a83 abc abe-ac5 ac7-ac9 acb-acd ae2-ae3 af0-af1 b01-b03 b3c "
    "b3e-b44 b47-b48 b4b-b4d b56-b57 b62-b63 b70 b82 bbe-bc2 bc6-bc8 bca-bcd bd7 bf3-bfa "
    "c01-c03 c3e-c44 c46-c48 c4a-c4d c55-c56 c62-c63 c7f c82-c83 cbc cbe-cc4 cc6-cc8 cca-ccd "
    "cd5-cd6 ce2-ce3 d02-d03 d3e-d44 d46-d48 d4a-d4d d57 d62-d63 d79 d82-d83 dca dcf-dd4 dd6 "
    "dd8-ddf df2-df4 e31 e34-e3a e3f e47-e4f e5a-e5b eb1 eb4-eb9 ebb-ebc ec8-ecd f01-f1f "
    "f34-f3f f71-f87 f8d-f97 f99-fbc fbe-fcc fce-fda 102b-103e 104a-104f 1056-1059 105e-1060 "
    "1062-1064 1067-106d 1071-1074 1082-108d 108f 109a-109f 10fb 135d-1368 1390-1399 1400 "
    "166d-166e 1680 169b-169c 16eb-16ed 1712-1714 1732-1736 1752-1753 1772-1773 17b4-17d6 "
    "17d8-17db 17dd 1800-180e 18a9 1920-192b 1930-193b 1940 1944-1945 19b0-19c0 19c8-19c9 "
    "19de-19ff 1a17-1a1b 1a1e-1a1f 1a55-1a5e 1a60-1a7c 1a7f 1aa0-1aa6 1aa8-1aad 1b00-1b04 "
    "1b34-1b44 1b5a-1b7c 1b80-1b82 1ba1-1bad 1be6-1bf3 1bfc-1bff 1c24-1c37 1c3b-1c3f 1c7e-1c7f "
    "1cc0-1cc7 1cd0-1ce8 1ced 1cf2-1cf4 1dc0-1de6 1dfc-1dff 1fbd 1fbf-1fc1 1fcd-1fcf 1fdd-1fdf "
    "1fed-1fef 1ffd-1ffe 2000-2064 206a-206f 207a-207e 208a-208e 20a0-20b9 20d0-20f0 2100-2101 "
    "2103-2106 2108-2109 2114 2116-2118 211e-2123 2125 2127 2129 212e 213a-213b 2140-2144 "
    "214a-214d 214f 2190-23f3 2400-2426 2440-244a 249c-24e9 2500-26ff 2701-2775 2794-2b4c "
    "2b50-2b59 2ce5-2cea 2cef-2cf1 2cf9-2cfc 2cfe-2cff 2d70 2d7f 2de0-2e2e 2e30-2e3b 2e80-2e99 "
    "2e9b-2ef3 2f00-2fd5 2ff0-2ffb 3000-3004 3008-3020 302a-3030 3036-3037 303d-303f 3099-309c "
    "30a0 30fb 3190-3191 3196-319f 31c0-31e3 3200-321e 322a-3247 3250 3260-327f 328a-32b0 "
    "32c0-32fe 3300-33ff 4dc0-4dff a490-a4c6 a4fe-a4ff a60d-a60f a66f-a67e a69f a6f0-a6f7 "
    "a700-a716 a720-a721 a789-a78a a802 a806 a80b a823-a82b a836-a839 a874-a877 a880-a881 "
    "a8b4-a8c4 a8ce-a8cf a8e0-a8f1 a8f8-a8fa a926-a92f a947-a953 a95f a980-a983 a9b3-a9cd "
    "a9de-a9df aa29-aa36 aa43 aa4c-aa4d aa5c-aa5f aa77-aa79 aa7b aab0 aab2-aab4 aab7-aab8 aabe- "
    "aabf aac1 aade-aadf aaeb-aaf1 aaf5-aaf6 abe3-abed fb1e fb29 fbb2-fbc1 fd3e-fd3f fdfc-fdfd "
    "fe00-fe19 fe20-fe26 fe30-fe52 fe54-fe66 fe68-fe6b feff ff01-ff0f ff1a-ff20 ff3b-ff40 "
    "ff5b-ff65 ffe0-ffe6 ffe8-ffee fff9-ffff 10100-10102 10137-1013f 10179-10189 10190-1019b "
    "101d0-101fd 1039f 103d0 10857 1091f 1093f 10a01-10a03 10a05-10a06 10a0c-10a0f 10a38-10a3a "
    "10a3f 10a50-10a58 10a7f 10b39-10b3f 11000-11002 11038-1104d 11080-11082 110b0-110c1 "
    "11100-11102 11127-11134 11140-11143 11180-11182 111b3-111c0 111c5-111c8 116ab-116b7 "
    "12470-12473 16f51-16f7e 16f8f-16f92 1d000-1d0f5 1d100-1d126 1d129-1d1dd 1d200-1d245 "
    "1d300-1d356 1d6c1 1d6db 1d6fb 1d715 1d735 1d74f 1d76f 1d789 1d7a9 1d7c3 1eef0-1eef1 "
    "1f000-1f02b 1f030-1f093 1f0a0-1f0ae 1f0b1-1f0be 1f0c1-1f0cf 1f0d1-1f0df 1f110-1f12e "
    "1f130-1f16b 1f170-1f19a 1f1e6-1f202 1f210-1f23a 1f240-1f248 1f250-1f251 1f300-1f320 "
    "1f330-1f335 1f337-1f37c 1f380-1f393 1f3a0-1f3c4 1f3c6-1f3ca 1f3e0-1f3f0 1f400-1f43e 1f440 "
    "1f442-1f4f7 1f4f9-1f4fc 1f500-1f53d 1f540-1f543 1f550-1f567 1f5fb-1f640 1f645-1f64f "
    "1f680-1f6c5 1f700-1f773 e0001 e0020-e007f e0100-e01ef "
)
_DIACRITICS = "300-304 306-30c 30f 311 31b 323-328 32d-32e 330-331 "
_FOLD = (
    "41-5a>+20 b5>+307 c0>-5f c1>-60 c2>-61 c3>-62 c4>-63 c5>-64 c6>+20 c7>-64 c8>-63 c9>-64 "
    "ca>-65 cb>-66 cc>-63 cd>-64 ce>-65 cf>-66 d0>+20 d1-d2>-63 d3>-64 d4>-65 d5>-66 d6>-67 "
    "d8>+20 d9>-64 da>-65 db>-66 dc>-67 dd>-64 de>+20 e0>-7f e1>-80 e2>-81 e3>-82 e4>-83 "
    "e5-e7/2>-84 e8>-83 e9>-84 ea>-85 eb>-86 ec>-83 ed>-84 ee>-85 ef>-86 f1-f2>-83 f3>-84 "
    "f4>-85 f5>-86 f6>-87 f9>-84 fa>-85 fb>-86 fc>-87 fd>-84 ff>-86 100>-9f 101>-a0 102>-a1 "
    "103>-a2 104>-a3 105>-a4 106>-a3 107>-a4 108>-a5 109>-a6 10a>-a7 10b>-a8 10c>-a9 "
    "10d-10e>-aa 10f>-ab 110>+1 112>-ad 113>-ae 114>-af 115>-b0 116>-b1 117>-b2 118>-b3 119>-b4 "
    "11a>-b5 11b>-b6 11c>-b5 11d>-b6 11e>-b7 11f>-b8 120>-b9 121>-ba 122>-bb 123-124>-bc "
    "125>-bd 126>+1 128>-bf 129>-c0 12a>-c1 12b>-c2 12c>-c3 12d>-c4 12e>-c5 12f>-c6 130>-c7 "
    "132>+1 134>-ca 135-136>-cb 137>-cc 139>-cd 13a>-ce 13b>-cf 13c>-d0 13d>-d1 13e>-d2 "
    "13f-141/2>+1 143>-d5 144>-d6 145>-d7 146>-d8 147>-d9 148>-da 14a>+1 14c>-dd 14d>-de "
    "14e>-df 14f>-e0 150>-e1 151>-e2 152>+1 154>-e2 155>-e3 156>-e4 157>-e5 158>-e6 159-15a>-e7 "
    "15b>-e8 15c>-e9 15d>-ea 15e>-eb 15f>-ec 160>-ed 161-162>-ee 163>-ef 164>-f0 165>-f1 166>+1 "
    "168>-f3 169>-f4 16a>-f5 16b>-f6 16c>-f7 16d>-f8 16e>-f9 16f>-fa 170>-fb 171>-fc 172>-fd "
    "173>-fe 174>-fd 175>-fe 176>-fd 177>-fe 178-179>-ff 17a>-100 17b>-101 17c>-102 17d>-103 "
    "17e>-104 17f>-10c 181>+d2 182-184/2>+1 186>+ce 187>+1 189-18a>+cd 18b>+1 18e>+4f 18f>+ca "
    "190>+cb 191>+1 193>+cd 194>+cf 196>+d3 197>+d1 198>+1 19c>+d3 19d>+d5 19f>+d6 1a0>-131 "
    "1a1>-132 1a2-1a4/2>+1 1a6>+da 1a7>+1 1a9>+da 1ac>+1 1ae>+da 1af>-13a 1b0>-13b 1b1-1b2>+d9 "
    "1b3-1b5/2>+1 1b7>+db 1b8>+1 1bc>+1 1c4>+2 1c5>+1 1c7>+2 1c8>+1 1ca>+2 1cb>+1 1cd>-16c "
    "1ce>-16d 1cf>-166 1d0>-167 1d1>-162 1d2>-163 1d3>-15e 1d4>-15f 1d5-1db/2>+1 1de-1e4/2>+1 "
    "1e6>-17f 1e7>-180 1e8>-17d 1e9>-17e 1ea>-17b 1eb>-17c 1ec-1ee/2>+1 1f0>-186 1f1>+2 1f2>+1 "
    "1f4>-18d 1f5>-18e 1f6>-61 1f7>-38 1f8>-18a 1f9>-18b 1fa-1fe/2>+1 200>-19f 201>-1a0 "
    "202>-1a1 203>-1a2 204>-19f 205>-1a0 206>-1a1 207>-1a2 208>-19f 209>-1a0 20a>-1a1 20b>-1a2 "
    "20c>-19d 20d>-19e 20e>-19f 20f>-1a0 210>-19e 211>-19f 212>-1a0 213>-1a1 214>-19f 215>-1a0 "
    "216>-1a1 217>-1a2 218>-1a5 219-21a>-1a6 21b>-1a7 21c>+1 21e>-1b6 21f>-1b7 220>-82 "
    "222-224/2>+1 226>-1c5 227>-1c6 228>-1c3 229>-1c4 22a-22c/2>+1 22e>-1bf 22f>-1c0 230>+1 "
    "232>-1b9 233>-1ba 23a>+2a2b 23b>+1 23d>-a3 23e>+2a28 241>+1 243>-c3 244>+45 245>+47 "
    "246-24e/2>+1 370-372/2>+1 376>+1 386>+26 388-38a>+25 38c>+40 38e-38f>+3f 391-3a1>+20 "
    "3a3-3ab>+20 3c2>+1 3cf>+8 3d0>-1e 3d1>-19 3d5>-f 3d6>-16 3d8-3ee/2>+1 3f0>-36 3f1>-30 "
    "3f4>-3c 3f5>-40 3f7>+1 3f9>-7 3fa>+1 3fd-3ff>-82 400-40f>+50 410-42f>+20 460-480/2>+1 "
    "48a-4be/2>+1 4c0>+f 4c1-4cd/2>+1 4d0-526/2>+1 531-556>+30 10a0-10c5>+1c60 10c7>+1c60 "
    "10cd>+1c60 1e00>-1d9f 1e01-1e02>-1da0 1e03>-1da1 1e04>-1da2 1e05>-1da3 1e06>-1da4 "
    "1e07>-1da5 1e08>+1 1e0a>-1da6 1e0b>-1da7 1e0c>-1da8 1e0d>-1da9 1e0e>-1daa 1e0f>-1dab "
    "1e10>-1dac 1e11>-1dad 1e12>-1dae 1e13>-1daf 1e14-1e16/2>+1 1e18>-1db3 1e19>-1db4 "
    "1e1a>-1db5 1e1b>-1db6 1e1c>+1 1e1e>-1db8 1e1f-1e20>-1db9 1e21-1e22>-1dba 1e23>-1dbb "
    "1e24>-1dbc 1e25>-1dbd 1e26>-1dbe 1e27>-1dbf 1e28>-1dc0 1e29>-1dc1 1e2a>-1dc2 "
    "1e2b-1e2c>-1dc3 1e2d>-1dc4 1e2e>+1 1e30>-1dc5 1e31>-1dc6 1e32>-1dc7 1e33>-1dc8 1e34>-1dc9 "
    "1e35-1e36>-1dca 1e37>-1dcb 1e38>+1 1e3a>-1dce 1e3b>-1dcf 1e3c>-1dd0 1e3d-1e3e>-1dd1 "
    "1e3f>-1dd2 1e40>-1dd3 1e41>-1dd4 1e42>-1dd5 1e43-1e44>-1dd6 1e45>-1dd7 1e46>-1dd8 "
    "1e47>-1dd9 1e48>-1dda 1e49>-1ddb 1e4a>-1ddc 1e4b>-1ddd 1e4c-1e52/2>+1 1e54>-1de4 "
    "1e55>-1de5 1e56>-1de6 1e57>-1de7 1e58>-1de6 1e59>-1de7 1e5a>-1de8 1e5b>-1de9 1e5c>+1 "
    "1e5e>-1dec 1e5f-1e60>-1ded 1e61>-1dee 1e62>-1def 1e63>-1df0 1e64-1e68/2>+1 1e6a>-1df6 "
    "1e6b>-1df7 1e6c>-1df8 1e6d>-1df9 1e6e>-1dfa 1e6f>-1dfb 1e70>-1dfc 1e71-1e72>-1dfd "
    "1e73>-1dfe 1e74>-1dff 1e75>-1e00 1e76>-1e01 1e77>-1e02 1e78-1e7a/2>+1 1e7c>-1e06 "
    "1e7d>-1e07 1e7e>-1e08 1e7f-1e80>-1e09 1e81>-1e0a 1e82>-1e0b 1e83>-1e0c 1e84>-1e0d "
    "1e85>-1e0e 1e86>-1e0f 1e87>-1e10 1e88>-1e11 1e89-1e8a>-1e12 1e8b>-1e13 1e8c>-1e14 "
    "1e8d-1e8e>-1e15 1e8f-1e90>-1e16 1e91>-1e17 1e92>-1e18 1e93>-1e19 1e94>-1e1a 1e95>-1e1b "
    "1e96>-1e2e 1e97>-1e23 1e98>-1e21 1e99>-1e20 1e9b>-1e28 1e9e>-1dbf 1ea0>-1e3f 1ea1>-1e40 "
    "1ea2>-1e41 1ea3>-1e42 1ea4-1eb6/2>+1 1eb8>-1e53 1eb9>-1e54 1eba>-1e55 1ebb>-1e56 "
    "1ebc>-1e57 1ebd>-1e58 1ebe-1ec6/2>+1 1ec8>-1e5f 1ec9>-1e60 1eca>-1e61 1ecb>-1e62 "
    "1ecc>-1e5d 1ecd>-1e5e 1ece>-1e5f 1ecf>-1e60 1ed0-1ee2/2>+1 1ee4>-1e6f 1ee5>-1e70 "
    "1ee6>-1e71 1ee7>-1e72 1ee8-1ef0/2>+1 1ef2>-1e79 1ef3>-1e7a 1ef4>-1e7b 1ef5>-1e7c "
    "1ef6>-1e7d 1ef7>-1e7e 1ef8>-1e7f 1ef9>-1e80 1efa-1efe/2>+1 1f08-1f0f>-8 1f18-1f1d>-8 "
    "1f28-1f2f>-8 1f38-1f3f>-8 1f48-1f4d>-8 1f59-1f5f/2>-8 1f68-1f6f>-8 1f88-1f8f>-8 "
    "1f98-1f9f>-8 1fa8-1faf>-8 1fb8-1fb9>-8 1fba-1fbb>-4a 1fbc>-9 1fbe>-1c05 1fc8-1fcb>-56 "
    "1fcc>-9 1fd8-1fd9>-8 1fda-1fdb>-64 1fe8-1fe9>-8 1fea-1feb>-70 1fec>-7 1ff8-1ff9>-80 "
    "1ffa-1ffb>-7e 1ffc>-9 2126>-1d5d 212a>-20bf 212b>-20ca 2132>+1c 2160-216f>+10 2183>+1 "
    "2c00-2c2e>+30 2c60>+1 2c62>-29f7 2c63>-ee6 2c64>-29e7 2c67-2c6b/2>+1 2c6d>-2a1c 2c6e>-29fd "
    "2c6f>-2a1f 2c70>-2a1e 2c72>+1 2c75>+1 2c7e-2c7f>-2a3f 2c80-2ce2/2>+1 2ceb-2ced/2>+1 "
    "2cf2>+1 a640-a66c/2>+1 a680-a696/2>+1 a722-a72e/2>+1 a732-a76e/2>+1 a779-a77b/2>+1 "
    "a77d>-8a04 a77e-a786/2>+1 a78b>+1 a78d>-a528 a790-a792/2>+1 a7a0-a7a8/2>+1 a7aa>-a544 "
    "ff21-ff3a>+20 10400-10427>+28 "
)
_FOLD_COMPLEX = (
    "1d5>-160 1d6>-161 1d7>-162 1d8>-163 1d9>-164 1da>-165 1db>-166 1dc>-167 1de>-17d 1df>-17e "
    "1ec>-17d 1ed>-17e 1fa>-199 1fb>-19a 22a>-1bb 22b>-1bc 22c>-1bd 22d>-1be 230>-1c1 231>-1c2 "
    "1e08>-1da5 1e09>-1da6 1e14>-1daf 1e15>-1db0 1e16>-1db1 1e17>-1db2 1e1c>-1db7 1e1d>-1db8 "
    "1e2e>-1dc5 1e2f>-1dc6 1e38>-1dcc 1e39>-1dcd 1e4c>-1ddd 1e4d>-1dde 1e4e>-1ddf 1e4f>-1de0 "
    "1e50>-1de1 1e51>-1de2 1e52>-1de3 1e53>-1de4 1e5c>-1dea 1e5d>-1deb 1e64>-1df1 1e65>-1df2 "
    "1e66>-1df3 1e67>-1df4 1e68>-1df5 1e69>-1df6 1e78>-1e03 1e79>-1e04 1e7a>-1e05 1e7b>-1e06 "
    "1ea4>-1e43 1ea5>-1e44 1ea6>-1e45 1ea7>-1e46 1ea8>-1e47 1ea9>-1e48 1eaa>-1e49 1eab>-1e4a "
    "1eac>-1e4b 1ead>-1e4c 1eae>-1e4d 1eaf>-1e4e 1eb0>-1e4f 1eb1>-1e50 1eb2>-1e51 1eb3>-1e52 "
    "1eb4>-1e53 1eb5>-1e54 1eb6>-1e55 1eb7>-1e56 1ebe>-1e59 1ebf>-1e5a 1ec0>-1e5b 1ec1>-1e5c "
    "1ec2>-1e5d 1ec3>-1e5e 1ec4>-1e5f 1ec5>-1e60 1ec6>-1e61 1ec7>-1e62 1ed0>-1e61 1ed1>-1e62 "
    "1ed2>-1e63 1ed3>-1e64 1ed4>-1e65 1ed5>-1e66 1ed6>-1e67 1ed7>-1e68 1ed8>-1e69 1ed9>-1e6a "
    "1eda>-1e6b 1edb>-1e6c 1edc>-1e6d 1edd>-1e6e 1ede>-1e6f 1edf>-1e70 1ee0>-1e71 1ee1>-1e72 "
    "1ee2>-1e73 1ee3>-1e74 1ee8>-1e73 1ee9>-1e74 1eea>-1e75 1eeb>-1e76 1eec>-1e77 1eed>-1e78 "
    "1eee>-1e79 1eef>-1e7a 1ef0>-1e7b 1ef1>-1e7c "
)


_MAX_STEMMED = 64  # FTS5_PORTER_MAX_TOKEN: longer tokens (in bytes) are not stemmed
_MAX_TOKEN = 32768  # FTS5_MAX_TOKEN_SIZE: FTS5 keeps this many bytes of a longer token
_CACHE_LIMIT = 400_000  # distinct words remembered per tokenizer before starting afresh


def _ranges(table: str) -> list[tuple[int, int]]:
    spans = []
    for item in table.split():
        first, _, last = item.partition("-")
        spans.append((int(first, 16), int(last or first, 16)))
    return spans


def _token_class(*excluded: str, last: int) -> str:
    """A regular-expression class of the code points up to ``last`` outside the ranges of
    ``excluded``. Positive, so that the usual characters are found in its bitmap at once."""
    spans = sorted(span for table in excluded for span in _ranges(table))
    spans.append((0xD800, 0xDFFF))  # surrogates: not text
    parts = []
    start = 1
    for first, end in sorted(spans):
        if first > start:
            parts.append((start, min(first - 1, last)))
        start = max(start, end + 1)
    parts.append((start, last))
    return "".join(
        f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in parts if lo <= hi
    )


def _fold_map(table: str) -> dict[int, str | None]:
    folds: dict[int, str | None] = {}
    for item in table.split():
        span, _, delta = item.partition(">")
        codes, _, step = span.partition("/")
        first, _, last = codes.partition("-")
        for code in range(int(first, 16), int(last or first, 16) + 1, int(step or "1")):
            folds[code] = chr(code + int(delta, 16))
    return folds


def _token_pattern(last: int) -> re.Pattern[str]:
    start = _token_class(_SEPARATORS, _DIACRITICS, last=last)
    return re.compile(f"[{start}][{_token_class(_SEPARATORS, last=last)}]*")


# Matching a class whose ranges go past U+FFFF is slow (those ranges are tried one by one):
# text with no such characters, nearly all of it, is matched with a pattern that has none.
_TOKEN = _token_pattern(0x10FFFF)
_BMP_TOKEN = _token_pattern(0xFFFF)
_SIMPLE_FOLD = _fold_map(_FOLD)
for _first, _last in _ranges(_DIACRITICS):
    _SIMPLE_FOLD.update(dict.fromkeys(range(_first, _last + 1)))
_COMPLEX_FOLD = _SIMPLE_FOLD | _fold_map(_FOLD_COMPLEX)


# FTS5's Porter stemmer (fts5_tokenize.c), step by step. A stem is a str of one character
# per byte; "y" is a vowel after a consonant, and in _has_vowel anywhere but first.


def _vowel(char: str, after_consonant: bool) -> bool:
    return char in "aeiou" or (after_consonant and char == "y")


def _gobble(stem: str, start: int, end: int, consonant: bool) -> int:
    """The end of the first vowels-then-consonant run in ``stem[start:end]``, or 0."""
    i = start
    while i < end:
        consonant = not _vowel(stem[i], consonant)
        if not consonant:
            break
        i += 1
    i += 1
    while i < end:
        consonant = not _vowel(stem[i], consonant)
        if consonant:
            return i + 1
        i += 1
    return 0


def _m_gt0(stem: str, end: int) -> bool:
    return _gobble(stem, 0, end, False) != 0


def _m_gt1(stem: str, end: int) -> bool:
    first = _gobble(stem, 0, end, False)
    return first != 0 and _gobble(stem, first, end, True) != 0


def _m_eq1(stem: str, end: int) -> bool:
    first = _gobble(stem, 0, end, False)
    return first != 0 and _gobble(stem, first, end, True) == 0


def _o_star(stem: str, end: int) -> bool:
    if stem[end - 1] in "wxy":
        return False
    mask = 0
    consonant = False
    for i in range(end):
        consonant = not _vowel(stem[i], consonant)
        mask = (mask << 1) + consonant
    return (mask & 7) == 5


def _m_gt1_s_or_t(stem: str, end: int) -> bool:
    return stem[end - 1] in "st" and _m_gt1(stem, end)


def _has_vowel(stem: str, end: int) -> bool:
    return any(_vowel(stem[i], i > 0) for i in range(end))


_Rule = tuple[str, Callable[[str, int], bool], str]

_STEP2: tuple[_Rule, ...] = tuple(
    (suffix, _m_gt0, output)
    for suffix, output in (
        ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
        ("izer", "ize"), ("logi", "log"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"),
        ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
        ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
        ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
    )
)  # fmt: skip
_STEP3: tuple[_Rule, ...] = tuple(
    (suffix, _m_gt0, output)
    for suffix, output in (
        ("ical", "ic"), ("ness", ""), ("icate", "ic"), ("iciti", "ic"), ("ful", ""),
        ("ative", ""), ("alize", "al"),
    )
)  # fmt: skip
_STEP4: tuple[_Rule, ...] = tuple(
    (suffix, _m_gt1_s_or_t if suffix == "ion" else _m_gt1, "")
    for suffix in (
        "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
        "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
    )
)  # fmt: skip


# A step's rules by the last letter of their suffix, in the step's order: (suffix, its
# length, condition, output).
_Step = dict[str, tuple[tuple[str, int, Callable[[str, int], bool], str], ...]]


def _step(rules: tuple[_Rule, ...]) -> _Step:
    by_last: dict[str, list[tuple[str, int, Callable[[str, int], bool], str]]] = {}
    for suffix, condition, output in rules:
        by_last.setdefault(suffix[-1], []).append((suffix, len(suffix), condition, output))
    return {last: tuple(listed) for last, listed in by_last.items()}


def _apply(stem: str, step: _Step) -> str:
    """The first rule whose suffix ends ``stem`` (leaving at least one byte) decides (two
    suffixes ending in different letters never both end it)."""
    listed = step.get(stem[-1])
    if listed is None:
        return stem
    n = len(stem)
    for suffix, length, condition, output in listed:
        if n > length and stem.endswith(suffix):
            end = n - length
            return stem[:end] + output if condition(stem, end) else stem
    return stem


_STEPS = (_step(_STEP2), _step(_STEP3), _step(_STEP4))


def _porter(word: str) -> str:
    """FTS5's stem of ``word``: one character per byte, 3 to 64 of them."""
    n = len(word)
    # Step 1a.
    if word[-1] == "s":
        if word[-2] == "e":
            if (n > 4 and word[-4:-2] == "ss") or (n > 3 and word[-3] == "i"):
                word = word[:-2]
            else:
                word = word[:-1]
        elif word[-2] != "s":
            word = word[:-1]
    # Step 1b.
    n = len(word)
    removed = False
    if n > 3 and word.endswith("eed"):
        if _m_gt0(word, n - 3):
            word = word[:-1]
    elif n > 2 and word.endswith("ed"):
        if _has_vowel(word, n - 2):
            word = word[:-2]
            removed = True
    elif n > 3 and word.endswith("ing") and _has_vowel(word, n - 3):
        word = word[:-3]
        removed = True
    if removed:
        n = len(word)
        if n > 2 and word[-2:] in ("at", "bl", "iz"):
            word += "e"
        else:
            last = word[-1]
            if n > 1 and not _vowel(last, False) and last not in "lsz" and last == word[-2]:
                word = word[:-1]
            elif _m_eq1(word, n) and _o_star(word, n):
                word += "e"
    # Step 1c.
    if word[-1] == "y" and _has_vowel(word, len(word) - 1):
        word = word[:-1] + "i"
    # Steps 2 to 4.
    word = _apply(_apply(_apply(word, _STEPS[0]), _STEPS[1]), _STEPS[2])
    # Step 5a.
    n = len(word)
    if word[-1] == "e" and (
        _m_gt1(word, n - 1) or (_m_eq1(word, n - 1) and not _o_star(word, n - 1))
    ):
        word = word[:-1]
    # Step 5b.
    n = len(word)
    if n > 1 and word.endswith("ll") and _m_gt1(word, n - 1):
        word = word[:-1]
    return word


def _stem(token: str) -> str:
    if token.isascii():
        if 3 <= len(token) <= _MAX_STEMMED:
            return _porter(token)
        return token
    raw = token.encode()
    if not 3 <= len(raw) <= _MAX_STEMMED:
        return token
    return _porter(raw.decode("latin-1")).encode("latin-1").decode("utf-8", "surrogateescape")


class _Tokens(dict[str, str]):
    """Each distinct word's token, computed once (a text repeats most of its words)."""

    def __init__(self, fold: dict[int, str | None], stem: bool) -> None:
        super().__init__()
        self._fold = fold
        self._stem = stem

    def __missing__(self, word: str) -> str:
        token = word.lower() if word.isascii() else word.translate(self._fold)
        if self._stem:
            token = _stem(token)
        if len(token) > _MAX_TOKEN // 4:
            raw = token.encode("utf-8", "surrogateescape")
            if len(raw) > _MAX_TOKEN:
                token = raw[:_MAX_TOKEN].decode("utf-8", "surrogateescape")
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        self[word] = token
        return token

    def of(self, text: str) -> list[str]:
        return list(map(self.__getitem__, _words(text)))


# ASCII text: its token characters (letters and digits) kept, every other byte a space, then
# split, all in C (faster than the pattern, which gives the same words).
_ASCII_SPACES = bytes(
    code if code < 128 and _BMP_TOKEN.fullmatch(chr(code)) else 32 for code in range(256)
)


def _words(text: str) -> list[str]:
    if text.isascii():
        return text.encode().translate(_ASCII_SPACES).decode().split()
    pattern = _BMP_TOKEN if max(text) <= "\uffff" else _TOKEN
    return pattern.findall(text)


_DOCUMENT = _Tokens(_SIMPLE_FOLD, stem=True)
_NAME = _Tokens(_COMPLEX_FOLD, stem=False)


def document_tokens(text: str) -> list[str]:
    """The tokens FTS5's ``porter unicode61`` tokenizer stores for ``text``, in order."""
    return _DOCUMENT.of(text)


class TermNumbers(dict[str, int]):
    """The tokens of :func:`document_tokens` as numbers, for a caller indexing many texts at
    once: ``terms[number]`` is the token (as ``spell`` writes it), numbered in the order
    first seen. Each distinct word is looked up once; the rest of a text's words cost a
    dictionary lookup each."""

    def __init__(self, spell: Callable[[str], str] = str) -> None:
        super().__init__()
        self.terms: list[str] = []
        self.tokens = _Numbered(self, spell)  # token -> number

    def __missing__(self, word: str) -> int:
        number = self[word] = self.tokens[_DOCUMENT[word]]
        return number

    def of(self, text: str) -> list[int]:
        """The numbers of ``text``'s tokens, in order."""
        return list(map(self.__getitem__, _words(text)))

    def numbers(self, tokens: list[str]) -> list[int]:
        """The number of each of ``tokens`` (distinct tokens of :func:`document_tokens`),
        numbering those not seen yet; while none is, at C speed."""
        if self.terms or len(set(tokens)) != len(tokens):
            return list(map(self.tokens.__getitem__, tokens))
        spelled = list(map(self.tokens.spell, tokens))
        by_term = dict(zip(spelled, range(len(spelled)), strict=True))
        if len(by_term) != len(spelled):  # two tokens spelled alike: one number
            return list(map(self.tokens.__getitem__, tokens))
        self.terms.extend(spelled)
        self.tokens.update(zip(tokens, range(len(tokens)), strict=True))
        self.tokens.adopt(by_term)
        return list(range(len(tokens)))


class _Numbered(dict[str, int]):
    """A token's number in a :class:`TermNumbers` (two tokens ``spell`` writes alike
    share one)."""

    def __init__(self, owner: TermNumbers, spell: Callable[[str], str]) -> None:
        super().__init__()
        self._owner = owner
        self.spell = spell
        self._by_term: dict[str, int] = {}

    def adopt(self, by_term: dict[str, int]) -> None:
        """Numbers given to spelled terms all at once (:meth:`TermNumbers.numbers`)."""
        self._by_term.update(by_term)

    def __missing__(self, token: str) -> int:
        term = self.spell(token)
        number = self._by_term.get(term)
        if number is None:
            number = self._by_term[term] = len(self._owner.terms)
            self._owner.terms.append(term)
        self[token] = number
        return number


class Tokenized(NamedTuple):
    """The tokens of a row's columns (:func:`tokenized_rows`): the tokens its numbers stand for
    (its own, first seen first, or those of every row of a batch: one list, pickled once),
    and each token as its index there (``array("i")`` bytes, column after column, ``sizes``
    of them in each column)."""

    terms: list[str]
    numbers: bytes
    sizes: tuple[int, ...]


def tokenized_rows(rows: Sequence[Sequence[str]]) -> list[Tokenized]:
    """The tokens of :func:`document_tokens` of each row's texts, in a form that crosses a
    process boundary cheaply (rows tokenized by a helper process while another writes),
    every row numbered in one list of tokens (pickled once with them). Each distinct word of the rows is looked up once, and the rest runs
    in plain dictionaries' C loops."""
    cells = [_words(text) for texts in rows for text in texts]
    distinct = dict.fromkeys(word for words in cells for word in words)
    tokens = list(map(_DOCUMENT.__getitem__, distinct))
    terms = list(dict.fromkeys(tokens))
    number_of = dict(zip(terms, range(len(terms)), strict=True))
    numbered = dict(zip(distinct, map(number_of.__getitem__, tokens), strict=True))
    found: list[Tokenized] = []
    at = 0
    for texts in rows:
        stream = array("i")
        sizes = []
        for words in cells[at : at + len(texts)]:
            stream.extend(map(numbered.__getitem__, words))
            sizes.append(len(words))
        at += len(texts)
        found.append(Tokenized(terms, stream.tobytes(), tuple(sizes)))
    return found


def name_tokens(text: str) -> list[str]:
    """The tokens FTS5's ``unicode61 remove_diacritics 2`` tokenizer stores for ``text``."""
    return _NAME.of(text)
