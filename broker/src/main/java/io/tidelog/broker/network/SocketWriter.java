package io.tidelog.broker.network;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.net.NetSocketInternal;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.TransferableChannel;

/**
 * Lets a kafka-clients {@link Send} (a response serialized by Kafka's own {@code SendBuilder})
 * write itself to a Vert.x socket: byte buffers are copied into socket writes, and file records
 * become {@link SegmentFileRegion}s sent with {@code sendfile}, or on an encrypted connection
 * {@link SegmentFileChunks} read as the socket drains. Writes queue in call order, so responses
 * keep their order. Event loop only.
 */
final class SocketWriter implements TransferableChannel {
  private static final int WRITE_CALLS_MAX = 1_000_000;
  private final NetSocketInternal socket;
  private final boolean encrypted;

  SocketWriter(NetSocketInternal socket, boolean encrypted) {
    this.socket = socket;
    this.encrypted = encrypted;
  }

  void write(Send send) throws IOException {
    for (int calls = 0; !send.completed(); calls++) {
      if (calls == WRITE_CALLS_MAX) {
        throw new IOException("a response did not finish after " + WRITE_CALLS_MAX + " writes");
      }
      send.writeTo(this);
    }
  }

  @Override
  public boolean hasPendingWrites() {
    return false;
  }

  @Override
  public long transferFrom(FileChannel fileChannel, long position, long count) {
    socket.writeMessage(
        encrypted
            ? new SegmentFileChunks(fileChannel, position, count)
            : new SegmentFileRegion(fileChannel, position, count));
    return count;
  }

  @Override
  public int write(ByteBuffer src) {
    int bytes = src.remaining();
    byte[] copy = new byte[bytes];
    src.get(copy);
    socket.write(Buffer.buffer(copy));
    return bytes;
  }

  @Override
  public long write(ByteBuffer[] srcs, int offset, int length) {
    long total = 0;
    for (int i = offset; i < offset + length; i++) {
      total += write(srcs[i]);
    }
    return total;
  }

  @Override
  public long write(ByteBuffer[] srcs) {
    return write(srcs, 0, srcs.length);
  }

  @Override
  public boolean isOpen() {
    return true;
  }

  @Override
  public void close() {}
}
