/* ProcessPrng, for Wine 8 (Debian bookworm's), which has no bcryptprimitives.dll: Rust's standard library
 * (1.78 and later) imports ProcessPrng from it on Windows to seed HashMap, so without this file a Rust
 * program does not start under that Wine ("Library bcryptprimitives.dll ... not found", status
 * c0000135). Real Windows (10 and later) and Wine >= 9 have the DLL; scripts/check-windows-wine.sh puts
 * this one beside the test programs only where Wine lacks it. It fills the buffer from RtlGenRandom
 * (advapi32's SystemFunction036), as Rust's std did before 1.78. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
