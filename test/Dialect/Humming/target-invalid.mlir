// RUN: humming-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{unknown device 'H300' (known: T4, A100, A800, A10, RTX 3090, Orin, L4, L40S, RTX 4090, H20, H100, H800, H200, B200, GB200, B300, Thor, RTX 5090, RTX PRO 6000, DGX Spark); an unknown device must give chip, sms, bandwidth, smem, l2 and at least f16}}
func.func @unknown_device() attributes {t = #humming.target<device = "H300">} { return }

// -----

// expected-error @+1 {{expected a known 'device' or the fields chip, sms, bandwidth, smem, l2 and at least f16}}
func.func @missing_facts() attributes {t = #humming.target<chip = "sm_90a", sms = 132>} { return }

// -----

// expected-error @+1 {{expected a PTX ISA version between 80 and 90 for sm_90a, got 70}}
func.func @old_ptx() attributes {t = #humming.target<device = "H200", ptx = 70>} { return }

// -----

// expected-error @+1 {{expected a PTX ISA version between 84 and 90 for sm_89, got 91}}
func.func @future_ptx() attributes {t = #humming.target<device = "L40S", ptx = 91>} { return }

// -----

// expected-error @+1 {{expected a chip among}}
func.func @bad_chip() attributes {t = #humming.target<device = "H200", chip = "sm_90b">} { return }

// -----

// expected-error @+1 {{expected smem <= 99 KiB on sm_86, got 163}}
func.func @too_much_smem() attributes {t = #humming.target<device = "A10", smem = 163>} { return }

// -----

// expected-error @+1 {{unknown #humming.target field 'memory'; expected one of device, chip, ptx, sms, bandwidth, smem, l2, f16, bf16, fp8, int8, int4, fp4}}
func.func @unknown_field() attributes {t = #humming.target<device = "H200", memory = 141>} { return }

// -----

// expected-error @+1 {{field 'sms' is given twice}}
func.func @twice() attributes {t = #humming.target<device = "H200", sms = 132, sms = 100>} { return }

// -----

// expected-error @+1 {{expected a positive 'sms', got 0}}
func.func @zero_sms() attributes {t = #humming.target<device = "H200", sms = 0>} { return }

// -----

// expected-error @+1 {{expected a non-negative 'fp8', got -1}}
func.func @negative_tflops() attributes {t = #humming.target<device = "H200", fp8 = -1.0>} { return }

// -----

// The module attribute must be a #humming.target.
// expected-error @+1 {{expected 'humming.target' to be a #humming.target attribute, got "H200"}}
module attributes {humming.target = "H200"} {}

// -----

// expected-error @+1 {{unknown humming attribute 'humming.device'; expected 'humming.target', 'humming.kernels' or 'humming.legalized'}}
module attributes {humming.device = #humming.target<device = "H200">} {}

// -----

// expected-error @+1 {{expected a positive 'bandwidth'}}
func.func @zero_bandwidth() attributes {t = #humming.target<device = "H200", bandwidth = 0.0>} { return }

// -----

// expected-error @+1 {{expected a positive f16 throughput, got 0}}
func.func @zero_f16() attributes {t = #humming.target<device = "H200", f16 = 0.0>} { return }

// -----

// The kernel table humming-lower-to-nvvm writes has a fixed shape.
// expected-error @+1 {{expected 'humming.kernels' to be an array of {name, m_min, m_max, block_m, block_n, threads, smem, split_k, cluster, input_map, grid_dependency, kind (MoE kernels also routing experts top_k block_size layout64; optionally cooperative cluster_x persistent workspace weight_map)} dictionaries, got [{name = "k"}]}}
module attributes {humming.kernels = [{name = "k"}]} {}

// -----

// A MoE field, when present, is an integer.
// expected-error @+1 {{expected 'humming.kernels' to be an array of}}
module attributes {humming.kernels = [{name = "k", m_min = 1, m_max = 0, block_m = 16, block_n = 64, threads = 128, smem = 0, split_k = 1, cluster = 1, input_map = 0, grid_dependency = 0, kind = 0, routing = "indexed"}]} {}

// -----

// So is the optional cooperative field.
// expected-error @+1 {{expected 'humming.kernels' to be an array of}}
module attributes {humming.kernels = [{name = "k", m_min = 1, m_max = 0, block_m = 16, block_n = 64, threads = 128, smem = 0, split_k = 1, cluster = 1, input_map = 0, grid_dependency = 0, kind = 0, cooperative = "yes"}]} {}
