#if FUZZING
/// `make fuzz` links every executable a build plugin needs with libFuzzer's runtime (its flags apply to the whole
/// build), and that runtime wants a fuzz target in each.
///
/// This tool is never run in that build.
@_cdecl("LLVMFuzzerTestOneInput")
func noFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { 0 }
#endif
