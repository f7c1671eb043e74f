package io.tidelog.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.stream.ChunkedInput;
import java.io.IOException;
import java.nio.channels.FileChannel;

/**
 * A range of a log segment's file, read in chunks of {@link #CHUNK_BYTES} as the socket drains, for
 * connections whose bytes are encrypted (TLS cannot encrypt a {@code sendfile}). So a large Fetch
 * holds one chunk at a time, never its whole answer. Reads are positional, as other readers share
 * the channel, and closing leaves the channel open: it belongs to the log.
 */
final class SegmentFileChunks implements ChunkedInput<ByteBuf> {
  static final int CHUNK_BYTES = 64 * 1024;
  private final FileChannel file;
  private final long position;
  private final long count;
  private long read;

  SegmentFileChunks(FileChannel file, long position, long count) {
    this.file = file;
    this.position = position;
    this.count = count;
  }

  @Override
  public boolean isEndOfInput() {
    return read >= count;
  }

  @Override
  public void close() {
    // The log owns the channel.
  }

  @Override
  @Deprecated
  public ByteBuf readChunk(ChannelHandlerContext ctx) throws IOException {
    return readChunk(ctx.alloc());
  }

  @Override
  public ByteBuf readChunk(ByteBufAllocator allocator) throws IOException {
    if (isEndOfInput()) {
      return null;
    }
    int bytes = (int) Math.min(CHUNK_BYTES, count - read);
    ByteBuf chunk = allocator.heapBuffer(bytes);
    try {
      int filled = 0;
      while (filled < bytes) {
        int n = chunk.writeBytes(file, position + read + filled, bytes - filled);
        if (n < 0) {
          throw new IOException(
              "the segment ended " + (count - read - filled) + " bytes before the fetched range");
        }
        filled += n;
      }
      read += bytes;
      return chunk;
    } catch (IOException | RuntimeException e) {
      chunk.release();
      throw e;
    }
  }

  @Override
  public long length() {
    return count;
  }

  @Override
  public long progress() {
    return read;
  }
}
