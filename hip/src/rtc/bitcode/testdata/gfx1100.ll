; Two kernels for gfx1100 (one with target features), a helper without a target-cpu.
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7"
target triple = "amdgcn-amd-amdhsa"

@counter = addrspace(1) global i32 0, align 4

define amdgpu_kernel void @scale(float addrspace(1)* %x, float %s) #0 {
  %v = load float, float addrspace(1)* %x, align 4
  %m = fmul float %v, %s
  store float %m, float addrspace(1)* %x, align 4
  ret void
}

define amdgpu_kernel void @count() #1 {
  %o = atomicrmw add i32 addrspace(1)* @counter, i32 1 seq_cst
  ret void
}

define float @helper(float %a) #2 {
  %r = fadd float %a, 1.0
  ret float %r
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="1,256" "target-cpu"="gfx1100" "uniform-work-group-size"="true" }
attributes #1 = { nounwind "target-cpu"="gfx1100" "target-features"="+xnack" }
attributes #2 = { nounwind readnone }
