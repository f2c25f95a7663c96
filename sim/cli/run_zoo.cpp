// `sim zoo <model>` and `sim zoo op OP key=value ...`: write a Frontend IR for a known network
// (CNNs in the compiler's own style, transformers through the Frontend IR writer) or for one
// operation of any kind.
#include <fstream>
#include <iostream>
#include <regex>

#include "frontends/frontend_ir/frontend_ir_writer.h"
#include "frontends/zoo/hf_config.h"
#include "frontends/zoo/zoo.h"
#include "sim/cli/commands.h"
#include "sim/ir/error.h"

namespace npusim::cli {

namespace {

nlohmann::ordered_json zoo_op(const ZooCliOptions& o) {
  if (o.args.size() < 2) {
    std::string valid;
    for (int i = 0; i < ir::kNumOpKinds; ++i) valid += (i ? ", " : "") + std::string(ir::op_name(static_cast<ir::OpKind>(i)));
    throw InputError("zoo op", "op", "give an operation: sim zoo op OP key=value ...; valid: " + valid);
  }
  if (!o.input.empty() || o.seq != 0 || o.kv_len != 0 || o.layers != 0 || o.shard != 0)
    throw InputError("zoo op", "op", "--input, --seq, --kv-len, --layers and --shard apply to zoo models; give an operation's sizes as key=value");
  frontends::zoo::OpWorkload w;
  w.op = o.args[1];
  w.args.assign(o.args.begin() + 2, o.args.end());
  w.dtype = o.dtype;
  w.batch = o.batch;
  return frontends::write_frontend_ir(frontends::zoo::make_op_graph(w));
}

nlohmann::ordered_json zoo_model(ZooCliOptions o) {
  // `sim zoo hf PATH/config.json`: a Hugging Face config (any model name ending in .json too).
  if (o.args[0] == "hf") {
    if (o.args.size() != 2 || !frontends::zoo::is_hf_config_path(o.args[1]))
      throw InputError("zoo", "hf", "give one Hugging Face config.json: sim zoo hf PATH/config.json");
    o.args.erase(o.args.begin());
  }
  if (o.args.size() > 1)
    throw InputError("zoo", "model", "unexpected argument '" + o.args[1] + "' after the model " + o.args[0] +
                                         " (one operation: sim zoo op OP key=value ...)");
  frontends::zoo::ZooOptions z;
  z.model = o.args[0];
  z.batch = o.batch;
  z.dtype = o.dtype;
  z.seq = o.seq;
  z.kv_len = o.kv_len;
  z.layers = o.layers;
  z.shard = std::max(o.shard, 1);
  if (!o.logits.empty()) {
    if (!frontends::zoo::is_transformer(z.model)) throw InputError("zoo", "--logits", "applies to the decoders");
    z.logits = o.logits;
  }
  if (o.shard > 0 && !frontends::zoo::is_transformer(z.model)) throw InputError("zoo", "--shard", "applies to transformers");
  z.expert_skew = o.expert_skew;
  if (o.expert_skew != 1) {
    const auto sh = frontends::zoo::transformer_shape(z.model);
    if (!sh || sh->experts == 0) throw InputError("zoo", "--expert-skew", "applies to mixture-of-experts models; " + z.model + " has no experts");
  }
  if (o.tp > 0 || o.pp > 0 || o.ep > 0) {
    if (o.shard > 0) throw InputError("zoo", "--shard", "writes one rank's graph on one device; --tp/--pp/--ep write the whole pipeline");
    if (!o.input.empty()) throw InputError("zoo", "--input", "--input applies to CNNs");
    return frontends::zoo::make_parallel_pipeline(z, {std::max(o.tp, 1), std::max(o.pp, 1), std::max(o.ep, 1), std::max(o.microbatches, 1)});
  }
  if (o.microbatches > 0) throw InputError("zoo", "--microbatches", "applies to the pipelines of --tp / --pp");
  if (frontends::zoo::is_transformer(z.model)) {
    if (!o.input.empty()) throw InputError("zoo", "--input", "--input applies to CNNs; transformers take --seq and --kv-len");
    return frontends::write_frontend_ir(frontends::zoo::make_transformer(z));
  }
  if (!o.input.empty()) {
    std::smatch m;
    static const std::regex re("([0-9]{1,9})x([0-9]{1,9})");
    if (!std::regex_match(o.input, m, re)) throw InputError("zoo", "--input", "expected HxW, e.g. 224x224, got '" + o.input + "'");
    z.height = std::stoi(m[1]);
    z.width = std::stoi(m[2]);
  }
  return frontends::zoo::make_frontend_ir(z);
}

}  // namespace

int run_zoo(const ZooCliOptions& o) {
  if (o.args.empty()) throw InputError("zoo", "model", "give a model or op OP key=value ...");
  if (o.args[0] == "op" && (o.tp > 0 || o.pp > 0 || o.ep > 0)) throw InputError("zoo op", "--tp", "--tp, --pp and --ep apply to the Llama and Mixtral models");
  const nlohmann::ordered_json doc = o.args[0] == "op" ? zoo_op(o) : zoo_model(o);
  // A pipeline's base64 payloads are long lines anyway: indent it by one.
  const std::string text = doc.dump(o.tp > 0 || o.pp > 0 || o.ep > 0 ? 1 : 3) + "\n";
  if (o.out.empty()) {
    std::cout << text;
  } else {
    std::ofstream f(o.out, std::ios::binary);
    if (!f) throw InputError(o.out, "", "cannot open for writing");
    f << text;
  }
  return kOk;
}

}  // namespace npusim::cli
