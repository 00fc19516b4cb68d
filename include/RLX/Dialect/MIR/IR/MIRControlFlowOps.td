//===- MIRControlFlowOps.td - rlx_mir.if, while, scan ----------*- tablegen -*-===//
//
// Control flow on tensors that autodiff goes through (the original RLX's If,
// While and Scan with ScanBackward). Semantics and rules:
// lib/Dialect/MIR/IR/ControlFlowOps.cpp; the CPU lowering to scf:
// lib/Conversion/MIRToLinalg/ControlFlowLowering.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_MIRCONTROLFLOWOPS_TD
#define RLX_DIALECT_MIR_IR_MIRCONTROLFLOWOPS_TD

defvar MIR_ControlFlow = [IsolatedFromAbove, RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<MIR_DecomposableOpInterface>,
    DeclareOpInterfaceMethods<MIR_DifferentiableOpInterface, ["vjp", "jvp"]>];

def MIR_IfOp : MIR_Op<"if", MIR_ControlFlow> {
  let summary = "one of two regions on a boolean scalar tensor (torch.cond)";
  let description = [{
    `torch.cond(pred, true_fn, false_fn, operands)` and the original RLX's
    `If`: runs `then` on `inputs` when `cond` (a 0-d `tensor<i1>`) is true,
    else `else`, and returns what the region yields. Both regions take the
    input types and yield the result types; they see nothing from outside
    (isolated from above: pass what they read as inputs).

    On the CPU path it is an `scf.if`; on the GPU path (and under
    `rlx-mir-vmap`, where `cond` may become a batch of booleans) both
    regions run and `rlx_mir.select` picks the results (the
    `DecomposableOpInterface` form): there the region not taken runs too
    and its values (a NaN included) are discarded.

    Derivatives: the vjp is an `rlx_mir.if` on the same `cond` whose regions
    are the branches' vjps; the jvp likewise with their jvps.

    The verifier rejects a `cond` that is not a 0-d `tensor<i1>`, an op
    without results, and regions whose arguments are not the input types or
    whose `rlx_mir.yield` is not the result types.

    Example:
    ```mlir
    %r = rlx_mir.if %p : tensor<i1> ins(%x : tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %e = rlx_mir.exp %a : tensor<4xf32>
      rlx_mir.yield %e : tensor<4xf32>
    } else {
    ^bb0(%a: tensor<4xf32>):
      %n = rlx_mir.neg %a : tensor<4xf32>
      rlx_mir.yield %n : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins RLX_Tensor:$cond, Variadic<RLX_Tensor>:$inputs);
  let results = (outs Variadic<RLX_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$thenRegion, SizedRegion<1>:$elseRegion);
  let assemblyFormat = [{
    $cond `:` type($cond) (`ins` `(` $inputs^ `:` type($inputs) `)`)? `->` type($outputs) attr-dict-with-keyword
    $thenRegion `else` $elseRegion
  }];
  let hasRegionVerifier = 1;
}

def MIR_WhileOp : MIR_Op<"while", MIR_ControlFlow> {
  let summary = "a loop while a condition holds, with an optional trip cap (torch.while_loop)";
  let description = [{
    `torch.while_loop(cond_fn, body_fn, carried_inputs)` and the original
    RLX's `While`: from `carries = inputs`, while `cond(carries)` is true
    (checked before every trip, so a false condition at the start runs no
    trip) and fewer than `max_iterations` trips have run (when given),
    `carries = body(carries)`. Results: the final carries, then the number
    of trips run as a 0-d `tensor<i64>`.

    `cond` takes the carry types and yields one 0-d `tensor<i1>`; `body`
    takes and yields the carry types. Both are isolated from above.

    On the CPU path it is an `scf.while`. The GPU path and `rlx-mir-vmap`
    need `max_iterations`: they run `max_iterations` predicated trips
    (`carries = select(cond(carries), body(carries), carries)`), the
    `DecomposableOpInterface` form. Derivatives need it too: the op is
    differentiated as the `rlx_mir.scan` of `max_iterations` steps whose
    step is `rlx_mir.if cond(c) then body(c) else c` (the same values).

    The verifier rejects an op whose results are not the carry types
    followed by `tensor<i64>`, a negative `max_iterations`, and regions
    whose arguments or yields do not have the types above.

    Example (case CF1: x0 = 1, while x < 100: x = 3x gives 243 after 5 trips):
    ```mlir
    %x, %trips = rlx_mir.while ins(%x0 : tensor<f32>) max_iterations = 10
        -> tensor<f32>, tensor<i64> cond {
    ^bb0(%x: tensor<f32>):
      %lt = rlx_mir.elementwise ins(%x : tensor<f32>) -> tensor<i1> {
      ^bb0(%s: f32):
        %c = arith.constant 100.0 : f32
        %b = arith.cmpf olt, %s, %c : f32
        rlx_mir.yield %b : i1
      }
      rlx_mir.yield %lt : tensor<i1>
    } do {
    ^bb0(%x: tensor<f32>):
      %three = rlx_mir.constant dense<3.0> : tensor<f32>
      %y = rlx_mir.mul %x, %three : tensor<f32>, tensor<f32>
      rlx_mir.yield %y : tensor<f32>
    }
    ```
  }];
  let arguments = (ins Variadic<RLX_Tensor>:$inputs, OptionalAttr<I64Attr>:$max_iterations);
  let results = (outs Variadic<RLX_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$condRegion, SizedRegion<1>:$body);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` (`max_iterations` `=` $max_iterations^)?
    `->` type($outputs) attr-dict-with-keyword `cond` $condRegion `do` $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The carried values' number (the results but the trip count).
    unsigned getNumCarries() { return getInputs().size(); }
  }];
}

def MIR_ScanOp : MIR_Op<"scan", !listconcat(MIR_ControlFlow, [AttrSizedOperandSegments])> {
  let summary = "a step function over a leading axis with a carry (torch scan, jax.lax.scan)";
  let description = [{
    The original RLX's `Scan` and torch's `scan(combine_fn, init, xs,
    additional_inputs)`: `L` steps (the leading size of every `xs`, or
    `length` without `xs`), in order `t = 0 … L−1`, or `L−1 … 0` with
    `reverse`. Step `t` runs `body(carry, xs[0][t], …, consts…)`, which
    yields the next carry and one value per stacked output `ys`; results:
    - the final carries (the `init` types),
    - each `ys[j]` stacked along a new leading axis of size `L` (`ys[j][t]`
      is step `t`'s, whatever the direction),
    - with `trajectory`, each carry after every step, stacked the same way.

    `body` takes the carry types, each `xs` type without its leading axis
    and the `consts` types (loop invariants: weights), in that order, and
    yields the carries then the per-step outputs. It is isolated from above.

    On the CPU path it is an `scf.for` over `L` (slices of `xs` in, slices
    of the outputs written in place); the GPU path and `rlx-mir-vmap` run
    it unrolled (the `DecomposableOpInterface` form, at most 4096 steps).

    Derivatives: the vjp is a scan the other way over the steps whose body
    is the vjp of `body`: it carries the carries' cotangents and the
    running sum of the `consts`' cotangents, and stacks the `xs`'
    cotangents; the carries each step starts from come from a forward scan
    that stacks them (a recomputation: the forward op is left as it is).
    With `num_checkpoints = S` (the original RLX's `num_checkpoints`; S
    divides L) the forward scan keeps only the carry entering each of S
    segments of L/S steps, and the backward scan goes over the segments,
    recomputing each one's carries from its checkpoint before its steps'
    vjps: memory for S + L/S carries instead of L, one more forward pass.
    The jvp is one scan of the carries and their tangents.

    The verifier rejects an op without results, `xs` of rank 0 or of
    different leading sizes, a `length` that disagrees with them or is
    missing without them, a `num_checkpoints` below 1 or not dividing L, results that are not the types above, and a body
    whose arguments or yields are not the types above.

    Example (a running sum, with the partial sums as `ys`):
    ```mlir
    %total, %sums = rlx_mir.scan init(%z : tensor<4xf32>) xs(%x : tensor<6x4xf32>)
        -> tensor<4xf32>, tensor<6x4xf32> {
    ^bb0(%c: tensor<4xf32>, %xt: tensor<4xf32>):
      %s = rlx_mir.add %c, %xt : tensor<4xf32>, tensor<4xf32>
      rlx_mir.yield %s, %s : tensor<4xf32>, tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<RLX_Tensor>:$init, Variadic<RLX_Tensor>:$xs,
                   Variadic<RLX_Tensor>:$consts, OptionalAttr<I64Attr>:$length,
                   UnitAttr:$reverse, UnitAttr:$trajectory,
                   OptionalAttr<I64Attr>:$num_checkpoints);
  let results = (outs Variadic<RLX_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`init` `(` $init^ `:` type($init) `)`)? (`xs` `(` $xs^ `:` type($xs) `)`)?
    (`consts` `(` $consts^ `:` type($consts) `)`)? (`length` `=` $length^)?
    (`reverse` $reverse^)? (`trajectory` $trajectory^)?
    (`num_checkpoints` `=` $num_checkpoints^)?
    `->` type($outputs) attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of steps: the leading size of the xs (kDynamic when it is
    /// dynamic), or `length`.
    int64_t getNumSteps();
    /// The per-step outputs' number.
    unsigned getNumYs() {
      return getNumResults() - getInit().size() * (getTrajectory() ? 2 : 1);
    }
  }];
}

#endif // RLX_DIALECT_MIR_IR_MIRCONTROLFLOWOPS_TD
