; A small kernel (shared memory, a barrier, a float atomic) for the ptxas tests:
; llvm19_kernel.sm_90.ptx is what llc-19 -march=nvptx64 -mcpu=sm_90 makes of it.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
@buf = internal addrspace(3) global [256 x float] undef, align 4
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
define void @kern(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %idx = zext i32 %tid to i64
  %p = getelementptr float, ptr addrspace(1) %in, i64 %idx
  %v = load float, ptr addrspace(1) %p
  %s = getelementptr [256 x float], ptr addrspace(3) @buf, i64 0, i64 %idx
  store float %v, ptr addrspace(3) %s
  call void @llvm.nvvm.barrier0()
  %w = load float, ptr addrspace(3) @buf
  %old = atomicrmw fadd ptr addrspace(1) %out, float %w seq_cst
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @kern, !"kernel", i32 1}
