# Writes malformed .pto files into the directory given as the only argument:
#   prefix-NNN.pto   every prefix of a valid function (a file cut off anywhere),
#   garbage-*.pto    bytes no .pto file contains (NUL, invalid UTF-8, binary noise),
#   edge-*.pto       extreme but well-formed-looking input (deep nesting, huge numbers).
# The no-crash test runs ptoc-opt on each and expects an error, never a crash.
import os
import random
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def write(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


valid = (b"func @f(%x: tensor<4x16xf32>, %y: tensor<1x16xf32>) -> (tensor<4x16xf32>, tensor<4x1xf32>) {\n"
         b"  %a = add %x, %y {vec_tile = [1, 16]} : tensor<4x16xf32>\n"
         b"  %s = sum %a {axes = [1], keepdim = true} : tensor<4x1xf32> loc(\"m.py\":3:5)\n"
         b"  %c = full {value = -1.5e-3} : tensor<4x16xf32>\n"
         b"  %m = matmul %x, %x {cube_tile = {m = [16, 16], k = [16, 16], n = [16, 16]}, transpose_b = true} : tensor<4x4xf32>\n"
         b"  return %a, %s\n"
         b"}\n")
# Every proper prefix that ends before the closing brace is malformed.
for n in range(1, valid.rindex(b"}")):
    write("prefix-%03d.pto" % n, valid[:n])

write("garbage-nul.pto", valid.replace(b"%a = add", b"%a = a\x00dd"))
write("garbage-utf8.pto", valid.replace(b"%s = sum", b"%s = \xff\xfesum"))
write("garbage-utf8-name.pto", valid.replace(b"%a", b"%\xc3\xa9"))
rng = random.Random(1234)
write("garbage-noise.pto", bytes(rng.randrange(256) for _ in range(4096)))
write("garbage-braces.pto", b"}}}{{{" * 100)
write("garbage-only-func.pto", b"func")
write("garbage-arrow.pto", b"func @f() -> -> {}")

write("edge-deep-array.pto", b"func @f() -> tensor<4xf32> {\n  %a = full {value = 1.0, v = "
      + b"[" * 100000 + b"} : tensor<4xf32>\n  return %a\n}\n")
write("edge-deep-dict.pto", b"func @f() -> tensor<4xf32> {\n  %a = full {value = 1.0, v = "
      + b"{a = " * 100000 + b"} : tensor<4xf32>\n  return %a\n}\n")
write("edge-huge-int.pto", b"func @f() -> tensor<4xi32> {\n  %a = full {value = "
      + b"9" * 10000 + b"} : tensor<4xi32>\n  return %a\n}\n")
write("edge-huge-dim.pto", b"func @f(%x: tensor<" + b"9" * 400 + b"xf32>) {\n  return\n}\n")
write("edge-huge-tile.pto", b"func @f(%x: tensor<4x64xf32>) -> tensor<8x64xf32> {\n"
      b"  %a = concat %x, %x {axis = 0, vec_tile = [9223372036854775807, 9223372036854775807]}"
      b" : tensor<8x64xf32>\n"
      b"  return %a\n}\n")
write("edge-huge-cube.pto", b"func @f(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {\n"
      b"  %a = matmul %x, %x {cube_tile = {m = [4611686018427387904, 4611686018427387904], "
      b"k = [4611686018427387904, 4611686018427387904], n = [16, 16]}} : tensor<64x64xf16>\n"
      b"  return %a\n}\n")
write("edge-huge-name.pto", b"func @f() {\n  return %" + b"9" * 30 + b"\n}\n")
write("edge-long-cycle.pto", b"func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %v0 = neg %v2999 : tensor<4xf32>\n"
      + b"".join(b"  %%v%d = neg %%v%d : tensor<4xf32>\n" % (i, i - 1) for i in range(1, 3000))
      + b"  return %v2999\n}\n")
write("edge-bad-loc.pto", b"func @f() loc(\"a\":99999999999:1) {\n  return\n}\n")
