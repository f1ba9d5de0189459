// Types for test/unit/bundle/*.test.ts.
export declare const GRPC_LAZY_REQUIRES: Record<string, string[]>
export declare function grpcPatches(): unknown
