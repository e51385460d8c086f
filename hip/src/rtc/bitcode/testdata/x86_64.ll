; The gfx90a module for x86-64: another triple, target-cpu "x86-64".

target triple = "x86_64-pc-linux-gnu"

@counter = global i32 0, align 4

define void @scale(float* %x, float %s) #0 {
  %v = load float, float* %x, align 4
  %m = fmul float %v, %s
  store float %m, float* %x, align 4
  ret void
}

define void @count() #1 {
  %o = atomicrmw add i32* @counter, i32 1 seq_cst
  ret void
}

define float @helper(float %a) #2 {
  %r = fadd float %a, 1.0
  ret float %r
}

attributes #0 = { nounwind "target-cpu"="x86-64" "uniform-work-group-size"="true" }
attributes #1 = { nounwind "target-cpu"="x86-64" }
attributes #2 = { nounwind readnone }
