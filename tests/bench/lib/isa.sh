# isa.sh - the CPU ISA caps the benchmarks run at; sourced by
# tests/bench/train_vs_torch.sh and amp_cpu.sh.
#
# A cap makes this CPU behave as an older one: HPCTRAIN_MAX_CPU_ISA caps
# hpctrain's kernels and oneDNN; ONEDNN_MAX_CPU_ISA is set to the same
# value so that oneDNN is capped for any program of the run (bench_peak,
# bench_amp, PyTorch's oneDNN).  Caps, lowest first:
#   avx2               Zen 2/3, Haswell to Broadwell
#   avx512_core        Skylake-SP, Cascade Lake, Ice Lake
#   avx512_core_bf16   Cooper Lake, Zen 4/5
#   avx512_core_amx    Sapphire and Emerald Rapids

ISA_ALL="avx2 avx512_core avx512_core_bf16 avx512_core_amx"

# isa_caps: the caps this CPU can run, lowest first, from /proc/cpuinfo.
isa_caps() {
	_f=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
	_has() { for _x; do case $_f in *" $_x "*) ;; *) return 1 ;; esac; done; }
	_has avx2 fma || return 0
	echo avx2
	_has avx512f avx512bw avx512vl avx512dq || return 0
	echo avx512_core
	_has avx512_bf16 || return 0
	echo avx512_core_bf16
	_has amx_bf16 amx_tile || return 0
	echo avx512_core_amx
}

# isa_check CAP...: exit 2 naming a cap that is unknown or that this CPU
# cannot run (a cap above the CPU would silently measure a lower one).
isa_check() {
	_have=" $(isa_caps | tr '\n' ' ') "
	for _c; do
		case " $ISA_ALL " in *" $_c "*) ;; *)
			echo "$0: unknown ISA cap '$_c' (one of: $ISA_ALL)" >&2
			exit 2 ;;
		esac
		case $_have in *" $_c "*) ;; *)
			echo "$0: this CPU cannot run ISA cap '$_c' (it runs: $(isa_caps | paste -sd' '))" >&2
			exit 2 ;;
		esac
	done
}

# isa_run CAP CMD...: CMD under the cap.
isa_run() {
	_c=$1
	shift
	env HPCTRAIN_MAX_CPU_ISA="$_c" ONEDNN_MAX_CPU_ISA="$(echo "$_c" | tr '[:lower:]' '[:upper:]')" "$@"
}

# isa_peer CAP TOP CMD...: a PyTorch CMD as on a CPU whose best is CAP
# (TOP: this CPU's best).  Below TOP, OpenBLAS gets the kernels it picks
# on such a CPU and torch's own kernels at most AVX2 where that is the
# cap; at TOP everything picks for itself, as users run it.
isa_peer() {
	_c=$1 _top=$2
	shift 2
	if [ "$_c" != "$_top" ]; then
		case $_c in
		avx2) set -- OPENBLAS_CORETYPE=Haswell ATEN_CPU_CAPABILITY=avx2 "$@" ;;
		avx512_core) set -- OPENBLAS_CORETYPE=SkylakeX "$@" ;;
		avx512_core_bf16) set -- OPENBLAS_CORETYPE=Cooperlake "$@" ;;
		esac
	fi
	env ONEDNN_MAX_CPU_ISA="$(echo "$_c" | tr '[:lower:]' '[:upper:]')" "$@"
}

# isa_coretype CORENAME: the OpenBLAS core type to name when OpenBLAS
# picked CORENAME, a generic core (it does not know this CPU model, as
# OpenBLAS 0.3.21 does not know Intel model 207), on a CPU with AVX-512
# (SkylakeX) or AVX2 (Haswell); nothing when it picked a real one.
isa_coretype() {
	case $1 in
	Prescott | Nehalem | Core2 | Katmai | Coppermine | Northwood | Penryn | Dunnington | \
		Atom | Banias | Yonah | Opteron | Athlon | generic* | GENERIC*) ;;
	*) return 0 ;;
	esac
	case " $(isa_caps | tr '\n' ' ') " in
	*" avx512_core "*) echo SkylakeX ;;
	*" avx2 "*) echo Haswell ;;
	esac
}

# isa_unset: no cap or kernel choice inherited from the caller.
isa_unset() {
	unset HPCTRAIN_MAX_CPU_ISA ONEDNN_MAX_CPU_ISA DNNL_MAX_CPU_ISA ATEN_CPU_CAPABILITY \
		OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
}
