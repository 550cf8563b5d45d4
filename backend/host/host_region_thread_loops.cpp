//===- backend/host/host_region_thread_loops.cpp - Loops over threads ---------===//

#include "backend/host/host_region_thread_loops.h"

#include "backend/host/host_interrupt_polls.h"

namespace kiln::backend {

llvm::BasicBlock *ThreadLoops::newBlock(const char *name) {
  return llvm::BasicBlock::Create(builder.getContext(), name,
                                  builder.GetInsertBlock()->getParent());
}

ThreadRows ThreadLoops::beginRows(llvm::Value *first) {
  llvm::Type *i32 = builder.getInt32Ty();
  ThreadRows rows;
  llvm::BasicBlock *from = builder.GetInsertBlock();
  rows.halves = newBlock("halves");
  builder.CreateBr(rows.halves);
  builder.SetInsertPoint(rows.halves);
  rows.secondHalf = builder.CreatePHI(builder.getInt1Ty(), 2, "second.half");
  rows.secondHalf->addIncoming(builder.getFalse(), from);
  llvm::Value *low = builder.CreateSelect(rows.secondHalf, builder.getInt32(0), first);
  llvm::Value *high = builder.CreateSelect(rows.secondHalf, first, threadCount);
  rows.rows = newBlock("rows");
  builder.CreateBr(rows.rows);

  builder.SetInsertPoint(rows.rows);
  rows.rowStart = builder.CreatePHI(i32, 2, "row.start");
  rows.rowStart->addIncoming(low, rows.halves);
  rows.halfDone = newBlock("half.done");
  llvm::BasicBlock *firstRow = newBlock("row");
  builder.CreateCondBr(builder.CreateICmpULT(rows.rowStart, high), firstRow, rows.halfDone);

  // A block of one row, the most common, needs no division.
  builder.SetInsertPoint(firstRow);
  llvm::BasicBlock *laterRow = newBlock("row.later");
  llvm::BasicBlock *row = newBlock("row.indexed");
  builder.CreateCondBr(builder.CreateICmpULT(rows.rowStart, dims[0]), row, laterRow);
  builder.SetInsertPoint(laterRow);
  llvm::Value *rowIndex = builder.CreateUDiv(rows.rowStart, dims[0]);
  llvm::Value *laterX = builder.CreateURem(rows.rowStart, dims[0]);
  llvm::Value *laterY = countsY ? builder.CreateURem(rowIndex, dims[1]) : nullptr;
  llvm::Value *laterZ = countsZ ? builder.CreateUDiv(rowIndex, dims[1]) : nullptr;
  builder.CreateBr(row);
  builder.SetInsertPoint(row);
  auto rowValue = [&](llvm::Value *inFirst, llvm::Value *later, const char *name) {
    llvm::PHINode *phi = builder.CreatePHI(i32, 2, name);
    phi->addIncoming(inFirst, firstRow);
    phi->addIncoming(later, laterRow);
    return phi;
  };
  rows.x = rowValue(rows.rowStart, laterX, "row.x");
  if (countsY)
    rows.y = rowValue(builder.getInt32(0), laterY, "y");
  if (countsZ)
    rows.z = rowValue(builder.getInt32(0), laterZ, "z");
  rows.rowBase = builder.CreateNUWSub(rows.rowStart, rows.x);
  rows.xEnd = builder.CreateBinaryIntrinsic(llvm::Intrinsic::umin, dims[0],
                                            builder.CreateNUWSub(high, rows.rowBase));
  return rows;
}

void ThreadLoops::endRows(ThreadRows &rows) {
  rows.rowStart->addIncoming(builder.CreateNUWAdd(rows.rowBase, dims[0]), builder.GetInsertBlock());
  markThreadLoop(*builder.CreateBr(rows.rows));
  builder.SetInsertPoint(rows.halfDone);
  rows.secondHalf->addIncoming(builder.getTrue(), rows.halfDone);
  llvm::BasicBlock *exit = newBlock("threads.done");
  markThreadLoop(*builder.CreateCondBr(rows.secondHalf, exit, rows.halves));
  builder.SetInsertPoint(exit);
}

void ThreadLoops::emitLiveRuns(const ThreadRows &rows, llvm::Value *states,
                               llvm::Value *endedBefore,
                               llvm::function_ref<void(llvm::Value *, llvm::Value *)> emit) {
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::BasicBlock *from = builder.GetInsertBlock();
  llvm::BasicBlock *runs = newBlock("runs");
  llvm::BasicBlock *find = newBlock("run.find");
  llvm::BasicBlock *scan = newBlock("run.scan");
  llvm::BasicBlock *run = newBlock("run");
  llvm::BasicBlock *done = newBlock("runs.done");
  builder.CreateBr(runs);
  builder.SetInsertPoint(runs);
  llvm::PHINode *cursor = builder.CreatePHI(i32, 2, "run.cursor");
  cursor->addIncoming(rows.x, from);
  builder.CreateCondBr(builder.CreateICmpULT(cursor, rows.xEnd), find, done);
  // Until some thread ends, the row is one run.
  builder.SetInsertPoint(find);
  builder.CreateCondBr(endedBefore, scan, run);
  builder.SetInsertPoint(scan);
  llvm::Value *scannedStart = emitScan(rows, states, cursor, rows.xEnd, /*ended=*/false);
  llvm::Value *scannedEnd = emitScan(rows, states, scannedStart, rows.xEnd, /*ended=*/true);
  llvm::BasicBlock *scanned = builder.GetInsertBlock();
  builder.CreateBr(run);
  builder.SetInsertPoint(run);
  llvm::PHINode *runStart = builder.CreatePHI(i32, 2, "run.start");
  runStart->addIncoming(cursor, find);
  runStart->addIncoming(scannedStart, scanned);
  llvm::PHINode *runEnd = builder.CreatePHI(i32, 2, "run.end");
  runEnd->addIncoming(rows.xEnd, find);
  runEnd->addIncoming(scannedEnd, scanned);
  emit(runStart, runEnd);
  cursor->addIncoming(runEnd, builder.GetInsertBlock());
  markThreadLoop(*builder.CreateBr(runs));
  builder.SetInsertPoint(done);
}

llvm::Value *ThreadLoops::emitScan(const ThreadRows &rows, llvm::Value *states, llvm::Value *from,
                                   llvm::Value *to, bool ended) {
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::BasicBlock *before = builder.GetInsertBlock();
  llvm::BasicBlock *scan = newBlock("scan");
  llvm::BasicBlock *test = newBlock("scan.test");
  llvm::BasicBlock *done = newBlock("scan.done");
  builder.CreateBr(scan);
  builder.SetInsertPoint(scan);
  llvm::PHINode *x = builder.CreatePHI(i32, 2, "scan.x");
  x->addIncoming(from, before);
  builder.CreateCondBr(builder.CreateICmpULT(x, to), test, done);
  builder.SetInsertPoint(test);
  llvm::Value *thread = builder.CreateNUWAdd(rows.rowBase, x);
  llvm::Value *state = builder.CreateAlignedLoad(
      i32, builder.CreateInBoundsGEP(i32, states, builder.CreateZExt(thread, builder.getInt64Ty())),
      llvm::Align(4));
  llvm::Value *hasEnded = builder.CreateICmpNE(state, builder.getInt32(0));
  x->addIncoming(builder.CreateNUWAdd(x, builder.getInt32(1)), test);
  markThreadLoop(*builder.CreateCondBr(ended ? hasEnded : builder.CreateNot(hasEnded), done, scan));
  builder.SetInsertPoint(done);
  return x;
}

ThreadLoop ThreadLoops::beginThreads(const ThreadRows &rows, llvm::Value *from, llvm::Value *to) {
  ThreadLoop loop;
  loop.to = to;
  llvm::BasicBlock *before = builder.GetInsertBlock();
  loop.body = newBlock("threads");
  loop.after = newBlock("threads.after");
  loop.latch = newBlock("next.thread");
  builder.CreateCondBr(builder.CreateICmpULT(from, to), loop.body, loop.after);
  builder.SetInsertPoint(loop.body);
  loop.x = builder.CreatePHI(builder.getInt32Ty(), 2, "x");
  loop.x->addIncoming(from, before);
  loop.linear = builder.CreateAdd(rows.rowBase, loop.x, "thread", /*HasNUW=*/true,
                                  /*HasNSW=*/true);
  return loop;
}

void ThreadLoops::endThreads(ThreadLoop &loop) {
  builder.SetInsertPoint(loop.latch);
  llvm::Value *next = builder.CreateAdd(loop.x, builder.getInt32(1), "", /*HasNUW=*/true,
                                        /*HasNSW=*/true);
  loop.x->addIncoming(next, loop.latch);
  markThreadLoop(
      *builder.CreateCondBr(builder.CreateICmpULT(next, loop.to), loop.body, loop.after));
  builder.SetInsertPoint(loop.after);
}

} // namespace kiln::backend
