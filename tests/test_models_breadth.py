"""The models added for breadth (issue 14): each entry's published numbers are pinned here as its
source states them, and the architecture reader, fed the entry's verbatim config.json subset, must
reproduce them. A changed config (a typo in hidden_size, a dropped expert count) fails the
parameter check; a changed published figure fails the pin.
"""

from __future__ import annotations

import pytest

from engine.models import load_models, model_index
from engine.catalog import normalise_name

#: id -> (published total params B, published active params B, num_hidden_layers, hidden_size,
#: Hugging Face repository whose config.json the entry copies).
PINNED = {
    # BEGIN PINNED
    "codellama-7b": (6.74, 6.74, 32, 4096, "codellama/CodeLlama-7b-Instruct-hf"),
    "codellama-13b": (13.0, 13.0, 40, 5120, "codellama/CodeLlama-13b-Instruct-hf"),
    "codellama-34b": (33.7, 33.7, 48, 8192, "codellama/CodeLlama-34b-Instruct-hf"),
    "command-r-v01": (35, 35, 40, 8192, "CohereForAI/c4ai-command-r-v01"),
    "command-r-08-2024": (32, 32, 40, 8192, "CohereForAI/c4ai-command-r-08-2024"),
    "command-r-plus": (104, 104, 64, 12288, "CohereForAI/c4ai-command-r-plus"),
    "aya-expanse-8b": (8, 8, 32, 4096, "CohereForAI/aya-expanse-8b"),
    "aya-expanse-32b": (32, 32, 40, 8192, "CohereForAI/aya-expanse-32b"),
    "command-r7b": (8.03, 8.03, 32, 4096, "CohereForAI/c4ai-command-r7b-12-2024"),
    "command-a": (111, 111, 64, 12288, "CohereForAI/c4ai-command-a-03-2025"),
    "deepseek-coder-v2-lite": (15.7, 2.4, 27, 2048, "deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct"),
    "deepseek-v2-lite": (15.7, 2.4, 27, 2048, "deepseek-ai/DeepSeek-V2-Lite-Chat"),
    "deepseek-v2.5": (236, 21, 60, 5120, "deepseek-ai/DeepSeek-V2.5"),
    "deepseek-coder-1.3b": (1.35, 1.35, 24, 2048, "deepseek-ai/deepseek-coder-1.3b-instruct"),
    "deepseek-coder-6.7b": (6.74, 6.74, 32, 4096, "deepseek-ai/deepseek-coder-6.7b-instruct"),
    "deepseek-coder-33b": (33.3, 33.3, 62, 7168, "deepseek-ai/deepseek-coder-33b-instruct"),
    "deepseek-r1-0528-qwen3-8b": (8.19, 8.19, 36, 4096, "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B"),
    "falcon3-1b": (1.67, 1.67, 18, 2048, "tiiuae/Falcon3-1B-Instruct"),
    "falcon3-3b": (3.23, 3.23, 22, 3072, "tiiuae/Falcon3-3B-Instruct"),
    "falcon3-7b": (7.46, 7.46, 28, 3072, "tiiuae/Falcon3-7B-Instruct"),
    "falcon3-10b": (10.3, 10.3, 40, 3072, "tiiuae/Falcon3-10B-Instruct"),
    "falcon-7b": (6.92, 6.92, 32, 4544, "tiiuae/falcon-7b-instruct"),
    "falcon-40b": (41.8, 41.8, 60, 8192, "tiiuae/falcon-40b-instruct"),
    "falcon-180b": (179.5, 179.5, 80, 14848, "tiiuae/falcon-180B-chat"),
    "gemma-2-2b": (2.61, 2.61, 26, 2304, "google/gemma-2-2b-it"),
    "gemma-3-270m": (0.268, 0.268, 18, 640, "google/gemma-3-270m-it"),
    "glm-4-9b-0414": (9.4, 9.4, 40, 4096, "THUDM/GLM-4-9B-0414"),
    "glm-4-32b-0414": (32.6, 32.6, 61, 6144, "THUDM/GLM-4-32B-0414"),
    "glm-z1-9b-0414": (9.4, 9.4, 40, 4096, "THUDM/GLM-Z1-9B-0414"),
    "glm-z1-32b-0414": (32.6, 32.6, 61, 6144, "THUDM/GLM-Z1-32B-0414"),
    "internlm2.5-1.8b": (1.89, 1.89, 24, 2048, "internlm/internlm2_5-1_8b-chat"),
    "internlm2.5-7b": (7.74, 7.74, 32, 4096, "internlm/internlm2_5-7b-chat"),
    "internlm2.5-20b": (19.9, 19.9, 48, 6144, "internlm/internlm2_5-20b-chat"),
    "internlm3-8b": (8.8, 8.8, 48, 4096, "internlm/internlm3-8b-instruct"),
    "lfm2-350m": (0.354, 0.354, 16, 1024, "LiquidAI/LFM2-350M"),
    "lfm2-700m": (0.742, 0.742, 16, 1536, "LiquidAI/LFM2-700M"),
    "lfm2-2.6b": (2.6, 2.6, 30, 2048, "LiquidAI/LFM2-2.6B"),
    "lfm2.5-1.2b": (1.17, 1.17, 16, 2048, "LiquidAI/LFM2.5-1.2B-Instruct"),
    "lfm2.5-1.2b-thinking": (1.17, 1.17, 16, 2048, "LiquidAI/LFM2.5-1.2B-Thinking"),
    "mistral-7b-v0.1": (7.24, 7.24, 32, 4096, "mistralai/Mistral-7B-Instruct-v0.1"),
    "mistral-7b-v0.2": (7.24, 7.24, 32, 4096, "mistralai/Mistral-7B-Instruct-v0.2"),
    "mixtral-8x22b": (141, 39, 56, 6144, "mistralai/Mixtral-8x22B-Instruct-v0.1"),
    "codestral-22b": (22.2, 22.2, 56, 6144, "mistralai/Codestral-22B-v0.1"),
    "mistral-small-22b": (22.2, 22.2, 56, 6144, "mistralai/Mistral-Small-Instruct-2409"),
    "mistral-large-2407": (123, 123, 88, 12288, "mistralai/Mistral-Large-Instruct-2407"),
    "magistral-small": (23.6, 23.6, 40, 5120, "mistralai/Magistral-Small-2506"),
    "hunyuan-a13b": (80, 13, 32, 4096, "tencent/Hunyuan-A13B-Instruct"),
    "dots.llm1": (142, 14, 62, 4096, "rednote-hilab/dots.llm1.inst"),
    "phi-3.5-moe": (41.9, 6.6, 32, 4096, "microsoft/Phi-3.5-MoE-instruct"),
    "olmoe-1b-7b": (6.92, 1.3, 16, 2048, "allenai/OLMoE-1B-7B-0924-Instruct"),
    "deepseek-moe-16b": (16.4, 2.8, 28, 2048, "deepseek-ai/deepseek-moe-16b-chat"),
    "gemma-2b": (2.51, 2.51, 18, 2048, "google/gemma-2b-it"),
    "gemma-7b": (8.54, 8.54, 28, 3072, "google/gemma-7b-it"),
    "deepseek-llm-7b": (6.91, 6.91, 30, 4096, "deepseek-ai/deepseek-llm-7b-chat"),
    "deepseek-llm-67b": (67.4, 67.4, 95, 8192, "deepseek-ai/deepseek-llm-67b-chat"),
    "granite-3.0-2b": (2.53, 2.53, 40, 2048, "ibm-granite/granite-3.0-2b-instruct"),
    "granite-3.0-8b": (8.17, 8.17, 40, 4096, "ibm-granite/granite-3.0-8b-instruct"),
    "smollm-135m": (0.135, 0.135, 30, 576, "HuggingFaceTB/SmolLM-135M-Instruct"),
    "smollm-360m": (0.362, 0.362, 32, 960, "HuggingFaceTB/SmolLM-360M-Instruct"),
    "smollm-1.7b": (1.71, 1.71, 24, 2048, "HuggingFaceTB/SmolLM-1.7B-Instruct"),
    "solar-10.7b": (10.7, 10.7, 48, 4096, "upstage/SOLAR-10.7B-Instruct-v1.0"),
    "mistral-nemo-minitron-8b": (8.41, 8.41, 40, 4096, "nvidia/Mistral-NeMo-Minitron-8B-Instruct"),
    "llama-3.1-minitron-4b": (4.51, 4.51, 32, 3072, "nvidia/Llama-3.1-Minitron-4B-Width-Base"),
    "stablelm-2-1.6b": (1.64, 1.64, 24, 2048, "stabilityai/stablelm-2-1_6b-chat"),
    "stablelm-zephyr-3b": (2.8, 2.8, 32, 2560, "stabilityai/stablelm-zephyr-3b"),
    "minicpm-2b": (2.72, 2.72, 40, 2304, "openbmb/MiniCPM-2B-sft-bf16"),
    "minicpm-1b": (1.36, 1.36, 52, 1536, "openbmb/MiniCPM-1B-sft-bf16"),
    "mobilellm-125m": (0.125, 0.125, 30, 576, "facebook/MobileLLM-125M"),
    "mobilellm-350m": (0.345, 0.345, 32, 960, "facebook/MobileLLM-350M"),
    "mobilellm-600m": (0.603, 0.603, 40, 1152, "facebook/MobileLLM-600M"),
    "mobilellm-1b": (1.01, 1.01, 54, 1280, "facebook/MobileLLM-1B"),
    "granite-8b-code": (8.05, 8.05, 36, 4096, "ibm-granite/granite-8b-code-instruct-128k"),
    "granite-3b-code": (3.48, 3.48, 32, 2560, "ibm-granite/granite-3b-code-instruct-128k"),
    "codellama-70b": (69.0, 69.0, 80, 8192, "codellama/CodeLlama-70b-Instruct-hf"),
    "opencoder-8b": (7.77, 7.77, 32, 4096, "infly/OpenCoder-8B-Instruct"),
    "eurollm-9b": (9.15, 9.15, 42, 4096, "utter-project/EuroLLM-9B-Instruct"),
    "eurollm-1.7b": (1.7, 1.7, 24, 2048, "utter-project/EuroLLM-1.7B-Instruct"),
    "acemath-1.5b": (1.54, 1.54, 28, 1536, "nvidia/AceMath-1.5B-Instruct"),
    "acemath-7b": (7.62, 7.62, 28, 3584, "nvidia/AceMath-7B-Instruct"),
    "baichuan-13b": (13.26, 13.26, 40, 5120, "baichuan-inc/Baichuan-13B-Chat"),
    "exaone-3.5-7.8b": (7.8, 7.8, 32, 4096, "LGAI-EXAONE/EXAONE-3.5-7.8B-Instruct"),
    "exaone-3.5-32b": (32.0, 32.0, 64, 5120, "LGAI-EXAONE/EXAONE-3.5-32B-Instruct"),
    "exaone-deep-32b": (32.0, 32.0, 64, 5120, "LGAI-EXAONE/EXAONE-Deep-32B"),
    "salamandra-7b": (7.77, 7.77, 32, 4096, "BSC-LT/salamandra-7b-instruct"),
    "bielik-11b-v2": (11.2, 11.2, 50, 4096, "speakleash/Bielik-11B-v2.3-Instruct"),
    "baichuan2-7b": (7.51, 7.51, 32, 4096, "baichuan-inc/Baichuan2-7B-Chat"),
    "baichuan2-13b": (13.9, 13.9, 40, 5120, "baichuan-inc/Baichuan2-13B-Chat"),
    "baichuan-7b": (7.0, 7.0, 32, 4096, "baichuan-inc/Baichuan-7B"),
    "orion-14b": (14.5, 14.5, 40, 5120, "OrionStarAI/Orion-14B-Chat"),
    "seed-oss-36b": (36.15, 36.15, 64, 5120, "ByteDance-Seed/Seed-OSS-36B-Instruct"),
    "ernie-4.5-0.3b": (0.36, 0.36, 18, 1024, "baidu/ERNIE-4.5-0.3B-PT"),
    "olmo-2-1b": (1.48, 1.48, 16, 2048, "allenai/OLMo-2-0425-1B-Instruct"),
    "granite-3.3-2b": (2.53, 2.53, 40, 2048, "ibm-granite/granite-3.3-2b-instruct"),
    "granite-3.2-8b": (8.17, 8.17, 40, 4096, "ibm-granite/granite-3.2-8b-instruct"),
    "granite-3.2-2b": (2.53, 2.53, 40, 2048, "ibm-granite/granite-3.2-2b-instruct"),
    "granite-3.1-8b": (8.17, 8.17, 40, 4096, "ibm-granite/granite-3.1-8b-instruct"),
    "granite-3.1-2b": (2.53, 2.53, 40, 2048, "ibm-granite/granite-3.1-2b-instruct"),
    "phi-3-mini-4k": (3.82, 3.82, 32, 3072, "microsoft/Phi-3-mini-4k-instruct"),
    "phi-3-mini-128k": (3.82, 3.82, 32, 3072, "microsoft/Phi-3-mini-128k-instruct"),
    "phi-3-medium-4k": (14.0, 14.0, 40, 5120, "microsoft/Phi-3-medium-4k-instruct"),
    "phi-3-medium-128k": (14.0, 14.0, 40, 5120, "microsoft/Phi-3-medium-128k-instruct"),
    "phi-3.5-mini": (3.82, 3.82, 32, 3072, "microsoft/Phi-3.5-mini-instruct"),
    "phi-4-reasoning": (14.7, 14.7, 40, 5120, "microsoft/Phi-4-reasoning"),
    "phi-4-reasoning-plus": (14.7, 14.7, 40, 5120, "microsoft/Phi-4-reasoning-plus"),
    "phi-4-mini-reasoning": (3.84, 3.84, 32, 3072, "microsoft/Phi-4-mini-reasoning"),
    "phi-2": (2.78, 2.78, 32, 2560, "microsoft/phi-2"),
    "phi-1.5": (1.42, 1.42, 24, 2048, "microsoft/phi-1_5"),
    "qwen1.5-0.5b": (0.464, 0.464, 24, 1024, "Qwen/Qwen1.5-0.5B-Chat"),
    "qwen1.5-1.8b": (1.84, 1.84, 24, 2048, "Qwen/Qwen1.5-1.8B-Chat"),
    "qwen1.5-4b": (3.95, 3.95, 40, 2560, "Qwen/Qwen1.5-4B-Chat"),
    "qwen1.5-7b": (7.72, 7.72, 32, 4096, "Qwen/Qwen1.5-7B-Chat"),
    "qwen1.5-14b": (14.2, 14.2, 40, 5120, "Qwen/Qwen1.5-14B-Chat"),
    "qwen1.5-32b": (32.5, 32.5, 64, 5120, "Qwen/Qwen1.5-32B-Chat"),
    "qwen1.5-72b": (72.3, 72.3, 80, 8192, "Qwen/Qwen1.5-72B-Chat"),
    "qwen1.5-110b": (111.0, 111.0, 80, 8192, "Qwen/Qwen1.5-110B-Chat"),
    "codeqwen1.5-7b": (7.25, 7.25, 32, 4096, "Qwen/CodeQwen1.5-7B-Chat"),
    "qwen2.5-0.5b": (0.49, 0.49, 24, 896, "Qwen/Qwen2.5-0.5B-Instruct"),
    "qwen2.5-1.5b": (1.54, 1.54, 28, 1536, "Qwen/Qwen2.5-1.5B-Instruct"),
    "qwen2.5-3b": (3.09, 3.09, 36, 2048, "Qwen/Qwen2.5-3B-Instruct"),
    "qwen2.5-coder-0.5b": (0.49, 0.49, 24, 896, "Qwen/Qwen2.5-Coder-0.5B-Instruct"),
    "qwen2.5-coder-1.5b": (1.54, 1.54, 28, 1536, "Qwen/Qwen2.5-Coder-1.5B-Instruct"),
    "qwen2.5-coder-3b": (3.09, 3.09, 36, 2048, "Qwen/Qwen2.5-Coder-3B-Instruct"),
    "qwen2.5-coder-14b": (14.7, 14.7, 48, 5120, "Qwen/Qwen2.5-Coder-14B-Instruct"),
    "qwq-32b": (32.5, 32.5, 64, 5120, "Qwen/QwQ-32B"),
    "qwen2-0.5b": (0.49, 0.49, 24, 896, "Qwen/Qwen2-0.5B-Instruct"),
    "qwen2-1.5b": (1.54, 1.54, 28, 1536, "Qwen/Qwen2-1.5B-Instruct"),
    "qwen2-7b": (7.62, 7.62, 28, 3584, "Qwen/Qwen2-7B-Instruct"),
    "qwen2-72b": (72.71, 72.71, 80, 8192, "Qwen/Qwen2-72B-Instruct"),
    "qwen2-57b-a14b": (57.41, 14.24, 28, 3584, "Qwen/Qwen2-57B-A14B-Instruct"),
    "qwen1.5-moe-a2.7b": (14.3, 2.7, 24, 2048, "Qwen/Qwen1.5-MoE-A2.7B-Chat"),
    "qwen2-math-1.5b": (1.54, 1.54, 28, 1536, "Qwen/Qwen2-Math-1.5B-Instruct"),
    "qwen2-math-7b": (7.62, 7.62, 28, 3584, "Qwen/Qwen2-Math-7B-Instruct"),
    "qwen2-math-72b": (72.7, 72.7, 80, 8192, "Qwen/Qwen2-Math-72B-Instruct"),
    "qwen2.5-math-1.5b": (1.54, 1.54, 28, 1536, "Qwen/Qwen2.5-Math-1.5B-Instruct"),
    "qwen2.5-math-7b": (7.62, 7.62, 28, 3584, "Qwen/Qwen2.5-Math-7B-Instruct"),
    "qwen2.5-math-72b": (72.7, 72.7, 80, 8192, "Qwen/Qwen2.5-Math-72B-Instruct"),
    "qwen2.5-7b-1m": (7.62, 7.62, 28, 3584, "Qwen/Qwen2.5-7B-Instruct-1M"),
    "qwen2.5-14b-1m": (14.7, 14.7, 48, 5120, "Qwen/Qwen2.5-14B-Instruct-1M"),
    "qwen2-vl-2b": (2.21, 2.21, 28, 1536, "Qwen/Qwen2-VL-2B-Instruct"),
    "qwen2-vl-7b": (8.29, 8.29, 28, 3584, "Qwen/Qwen2-VL-7B-Instruct"),
    "qwen2.5-vl-3b": (3.75, 3.75, 36, 2048, "Qwen/Qwen2.5-VL-3B-Instruct"),
    "qwen2.5-vl-7b": (8.29, 8.29, 28, 3584, "Qwen/Qwen2.5-VL-7B-Instruct"),
    "qwen2.5-vl-32b": (33.5, 33.5, 64, 5120, "Qwen/Qwen2.5-VL-32B-Instruct"),
    "qwen2.5-vl-72b": (73.4, 73.4, 80, 8192, "Qwen/Qwen2.5-VL-72B-Instruct"),
    "smollm2-135m": (0.135, 0.135, 30, 576, "HuggingFaceTB/SmolLM2-135M-Instruct"),
    "starcoder2-3b": (3.03, 3.03, 30, 3072, "bigcode/starcoder2-3b"),
    "starcoder2-7b": (7.17, 7.17, 32, 4608, "bigcode/starcoder2-7b"),
    "starcoder2-15b": (16.0, 16.0, 40, 6144, "bigcode/starcoder2-15b"),
    "yi-1.5-6b": (6.06, 6.06, 32, 4096, "01-ai/Yi-1.5-6B-Chat"),
    "yi-1.5-9b": (8.83, 8.83, 48, 4096, "01-ai/Yi-1.5-9B-Chat"),
    "yi-1.5-34b": (34.4, 34.4, 60, 7168, "01-ai/Yi-1.5-34B-Chat"),
    "yi-coder-9b": (8.83, 8.83, 48, 4096, "01-ai/Yi-Coder-9B-Chat"),
    "yi-coder-1.5b": (1.48, 1.48, 24, 2048, "01-ai/Yi-Coder-1.5B-Chat"),
    "trinity-mini": (26, 3, 32, 2048, "arcee-ai/Trinity-Mini"),
    "falcon-h1-0.5b": (0.5, 0.5, 36, 1024, "tiiuae/Falcon-H1-0.5B-Instruct"),
    "falcon-h1-1.5b": (1.5, 1.5, 24, 2048, "tiiuae/Falcon-H1-1.5B-Instruct"),
    "falcon-h1-7b": (7, 7, 44, 3072, "tiiuae/Falcon-H1-7B-Instruct"),
    "falcon-h1-34b": (34, 34, 72, 5120, "tiiuae/Falcon-H1-34B-Instruct"),
    "devstral-2-123b": (123, 123, 88, 12288, "mistralai/Devstral-2-123B-Instruct-2512"),
    # END PINNED
}

#: Publishers that count "activated" parameters without the input embedding table (a row lookup);
#: every other entry counts every weight one token uses. Reason per entry.
NO_INPUT_EMBEDDING = {
    "deepseek-coder-v2-lite": "DeepSeek's 2.4B activated leaves out the 102,400 x 2,048 input embedding",
    "deepseek-v2-lite": "DeepSeek's 2.4B activated leaves out the input embedding",
    "deepseek-v2.5": "DeepSeek-V2 paper's 21B activated leaves out the input embedding",
    "trinity-mini": "Arcee's 3B active: 3.06B computed without the 200,192 x 2,048 input embedding, 3.47B with it",
}

#: Published figures that are a rounded headline ("A3B", "22B activated"), with the relative slack they need.
ROUNDED = {
    "qwen3-30b-a3b-instruct-2507": (0.02, 0.06, "card: 3.3B activated; 3.35B computed without the input embedding"),
    "qwen3-30b-a3b-thinking-2507": (0.02, 0.06, "card: 3.3B activated; 3.35B computed without the input embedding"),
    "mixtral-8x22b": (0.02, 0.02, "141B / 39B as announced"),
    "deepseek-coder-v2-lite": (0.02, 0.03, "card: 2.4B activated; 2.45B computed without the input embedding"),
    "deepseek-v2-lite": (0.02, 0.03, "card: 2.4B activated; 2.45B computed without the input embedding"),
    "trinity-mini": (0.02, 0.03, "card: 26B, 3B active; 26.12B and 3.06B computed"),
    "falcon-h1-0.5b": (0.05, 0.05, "the name's 0.5B; 0.52B computed"),
    "falcon-h1-1.5b": (0.04, 0.04, "the name's 1.5B; 1.55B computed"),
    "falcon-h1-7b": (0.09, 0.09, "the name's 7B; 7.59B computed"),
    "eurollm-1.7b": (0.03, 0.03, "card: 1.7B parameter; 1.66B computed"),
    "devstral-2-123b": (0.02, 0.02, "card: 123B; 125.03B computed (llama-bench's count for its GGUF)"),
}

TOLERANCE = 0.02


def test_catalog_has_at_least_250_models():
    assert len(load_models()) >= 250


@pytest.mark.parametrize("entry_id", sorted(PINNED))
def test_entry_matches_its_pin(entry_id):
    m = load_models()[entry_id]
    params_b, active_b, layers, hidden, repo = PINNED[entry_id]
    assert (m.params_b, m.active_params_b, m.hf_repo) == (params_b, active_b, repo)
    # EXAONE names its layer count num_layers.
    assert (m.config.get("num_hidden_layers", m.config.get("num_layers")), m.config.get("hidden_size")) == (layers, hidden)
    assert m.source.startswith(f"https://huggingface.co/{repo}/") and "config.json" in m.source
    assert "params_b" in m.sources


@pytest.mark.parametrize("entry_id", sorted(PINNED))
def test_reader_reproduces_published_parameters(entry_id):
    m = load_models()[entry_id]
    arch = m.arch
    total_tol, active_tol, _why = ROUNDED.get(entry_id, (TOLERANCE, TOLERANCE, ""))
    assert arch.params_main / 1e9 == pytest.approx(m.params_b - m.vision_params_b, rel=total_tol)
    active = arch.params_active
    if entry_id in NO_INPUT_EMBEDDING:
        active -= sum(t.params for t in arch.tensors if t.name == "token_embd")
    assert active / 1e9 == pytest.approx(m.active_params_b - m.vision_params_b, rel=active_tol)
    assert len(arch.attention) == arch.layers == m.config.get("num_hidden_layers", m.config.get("num_layers"))


@pytest.mark.parametrize("entry_id", sorted(PINNED))
def test_names_resolve_to_the_entry(entry_id):
    m = load_models()[entry_id]
    names = model_index().names
    assert names[normalise_name(m.name)] == entry_id
    assert names[normalise_name(m.hf_repo)] == entry_id


def _arch(entry_id):
    return load_models()[entry_id].arch


def test_hunyuan_routes_8_of_64_with_one_shared_expert():
    arch = _arch("hunyuan-a13b")
    assert (arch.n_experts, arch.experts_per_token) == (64, 8)
    shared = [t for t in arch.tensors if t.name == "ffn_up_shexp"]
    assert len(shared) == 32 and {(t.rows, t.cols) for t in shared} == {(3072, 4096)}


def test_dots1_first_block_dense_then_experts():
    arch = _arch("dots.llm1")
    dense = sorted({t.layer for t in arch.tensors if t.name == "ffn_gate"})
    routed = sorted({t.layer for t in arch.tensors if t.name == "ffn_gate_exps"})
    assert dense == [0] and routed == list(range(1, 62))
    assert {t.experts for t in arch.tensors if t.name == "ffn_gate_exps"} == {128}


def test_cohere2_three_sliding_layers_then_one_global():
    arch = _arch("command-r7b")
    kinds = [layer.kind for layer in arch.attention]
    assert kinds[:8] == ["sliding"] * 3 + ["full"] + ["sliding"] * 3 + ["full"]
    assert {layer.window for layer in arch.attention if layer.kind == "sliding"} == {4096}
    assert arch.tied_embeddings and not any(t.name == "output" for t in arch.tensors)


def test_starcoder2_mlp_has_no_gate():
    arch = _arch("starcoder2-7b")
    names = {t.name for t in arch.tensors}
    assert "ffn_up" in names and "ffn_down" in names and "ffn_gate" not in names


def test_command_r_v01_has_full_multi_head_kv():
    # 40 layers x (K + V) x 64 KV heads x 128 dims: 1.25 MiB per token at f16, 8x the 08-2024 refresh.
    v01, refresh = _arch("command-r-v01"), _arch("command-r-08-2024")
    assert sum(layer.kv_elements_per_token for layer in v01.attention) == 40 * 2 * 64 * 128
    assert sum(layer.kv_elements_per_token for layer in refresh.attention) == 40 * 2 * 8 * 128


def test_falcon_7b_is_multi_query_and_40b_grouped():
    seven, forty = _arch("falcon-7b"), _arch("falcon-40b")
    assert {layer.kv_elements_per_token for layer in seven.attention} == {2 * 1 * 64}
    assert {layer.kv_elements_per_token for layer in forty.attention} == {2 * 8 * 64}
    assert "ffn_gate" not in {t.name for t in seven.tensors}


def test_deepseek_moe_16b_routes_6_of_64_plus_2_shared():
    arch = _arch("deepseek-moe-16b")
    assert (arch.n_experts, arch.experts_per_token) == (64, 6)
    shared = next(t for t in arch.tensors if t.name == "ffn_up_shexp")
    assert shared.rows == 2 * 1408


def test_vision_models_count_the_encoder_apart():
    m = load_models()["qwen2.5-vl-7b"]
    assert m.vision_params_b > 0 and m.arch.params_main / 1e9 == pytest.approx(m.params_b - m.vision_params_b, rel=0.01)


def test_afmoe_three_sliding_layers_to_one_global_two_dense_blocks_then_experts():
    """Arcee Trinity Mini (afmoe): every 4th of 32 layers global, the others a 2048-token window;
    blocks 0-1 dense, then 128 routed experts (8 per token) + 1 shared."""
    arch = _arch("trinity-mini")
    kinds = [layer.kind for layer in arch.attention]
    assert kinds.count("full") == 8 and kinds[3] == "full" and kinds[:3] == ["sliding"] * 3
    assert {layer.window for layer in arch.attention if layer.kind == "sliding"} == {2048}
    names = {(t.name, t.layer) for t in arch.tensors}
    assert ("ffn_up", 1) in names and ("ffn_up_exps", 1) not in names and ("ffn_up_exps", 2) in names
    assert ("ffn_up_shexp", 2) in names and ("attn_gate", 0) in names
    assert (arch.n_experts, arch.experts_per_token) == (128, 8)


def test_falcon_h1_runs_attention_and_mamba_in_every_layer():
    """Falcon-H1: every layer keeps a KV cache (2 KV heads) and a constant Mamba-2 state; the
    untied 7B counts to 7.59B (HF transformers' table: 44 layers, 3072 wide, 24 Mamba heads)."""
    from engine.kvcache import state_bytes

    arch = _arch("falcon-h1-7b")
    assert {layer.kind for layer in arch.attention} == {"full"} and len(arch.attention) == 44
    assert all(layer.kv_elements_per_token == 2 * 2 * 128 and layer.state_elements for layer in arch.attention)
    # Mamba-2 state per layer: 24 heads x 128 x 256 + 3 x (3072 + 2 x 256) conv inputs.
    assert arch.attention[0].state_elements == 24 * 128 * 256 + 3 * (3072 + 512)
    assert state_bytes(arch) > 0
    assert arch.params_total / 1e9 == pytest.approx(7.59, abs=0.01)
