// The settings of a run that every rank must share (comm/rank_agreement.h): each option's
// effective value (command line, --config file or default), the resolved model config,
// and the identity of each data file (its size and a hash of its first and last bytes,
// which tells a file that differs between nodes without reading all of it).
#pragma once

#include <string>
#include <vector>

#include "comm/rank_agreement.h"
#include "core/model_config.h"
#include "launch/command_line.h"

namespace llmft {

std::vector<Setting> option_settings(const po::variables_map& values);
Setting model_setting(const ModelConfig& config);
// `option` names the file in an error (--data, --val-data); an absent path gives "none".
Setting data_file_setting(const std::string& option, const std::string& path);

}  // namespace llmft
