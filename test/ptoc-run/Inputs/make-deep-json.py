# Writes JSON nested 40,000 levels deep (the reproduction: it overflowed the
# stack of llvm::json's recursive parser) into the folder given as the only argument:
#   deep.json         [[[...]]] on one line
#   deep-field.json   {"aic_cores": [[[...]]]}: deep inside an object, as a field value
#   deep-record.json  a bank record line whose config is [[[...]]]
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
levels = 40000
deep = "[" * levels + "]" * levels


def write(name, text):
    with open(os.path.join(out, name), "w") as f:
        f.write(text + "\n")


write("deep.json", deep)
write("deep-field.json", '{"aic_cores": ' + deep + "}")
write("deep-record.json",
      '{"format":1,"ptoc":"0.1.0","device":"tiny","device_hash":"0000000000000000",'
      '"graph_hash":"00000000000000ab","signature":"s","strategy":"ga","time_us":1,'
      '"timestamp":"2024-05-01T12:00:00Z","config":' + deep + "}")
