package io.tidelog.broker.network;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.net.NetSocketInternal;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Optional;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.network.Send;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection: size-prefixed frames in, responses out in request order while many
 * requests are in flight.
 *
 * <p>Framing: once a frame's 4-byte size is read and checked against {@code
 * socket.request.max.bytes}, one array of exactly that size is taken from the listener's request
 * memory ({@code queued.max.request.bytes}) and the socket's chunks are copied straight into it (as
 * Kafka's {@code NetworkReceive} does); the request is parsed from that array without a further
 * copy, and its memory goes back once the request is answered. While the memory cannot hold the
 * frame, the connection stops reading and tries again every {@link #MEMORY_RETRY_MS} ms, as Kafka's
 * selector mutes a channel the memory pool cannot serve: clients that send sizes without bodies
 * hold at most the budget, and nobody runs out of heap. (They can hold all of it, until {@code
 * connections.max.idle.ms} closes them: Kafka's budget has the same limit.)
 *
 * <p>Back-pressure: at most {@link #IN_FLIGHT_MAX} requests wait for their turn; beyond that, and
 * while the socket's write queue is full, the connection stops reading and keeps the rest of the
 * current chunk until it resumes. Event loop only.
 */
final class KafkaConnection {
  static final int IN_FLIGHT_MAX = 64;
  private static final long MEMORY_RETRY_MS = 10;
  private static final int SIZE_PREFIX_BYTES = 4;
  private static final Logger LOG = LoggerFactory.getLogger(KafkaConnection.class);

  private final NetSocketInternal socket;
  private final RequestProcessor processor;
  private final int requestMaxBytes;
  private final MemoryPool memory;
  private final Context context;
  private final String id;
  private final SocketWriter writer;
  private final ArrayDeque<Future<Optional<Send>>> inFlight = new ArrayDeque<>();
  private int sizeBytesRead;
  private int frameSize;
  private ByteBuffer frame;
  private Buffer pendingChunk;
  private int pendingPosition;
  private boolean paused;
  private boolean awaitingMemory;
  private boolean closed;

  /**
   * @param memory the listener's request memory, shared by its connections
   * @param onClosed told once when the connection closes, for either side's reason
   */
  KafkaConnection(
      NetSocketInternal socket,
      RequestProcessor processor,
      int requestMaxBytes,
      MemoryPool memory,
      Runnable onClosed) {
    this.socket = socket;
    this.processor = processor;
    this.requestMaxBytes = requestMaxBytes;
    this.memory = memory;
    this.context = Vertx.currentContext();
    this.id = socket.localAddress() + "-" + socket.remoteAddress();
    this.writer = new SocketWriter(socket);
    socket.handler(chunk -> consume(chunk, 0));
    socket.exceptionHandler(this::onReadFailure);
    socket.closeHandler(
        v -> {
          closed = true;
          releaseFrame();
          onClosed.run();
        });
    socket.drainHandler(v -> maybeResume());
  }

  /** Reads frames from {@code chunk}; stops, keeping the rest, when the connection must pause. */
  private void consume(Buffer chunk, int from) {
    int position = from;
    while (position < chunk.length() && !closed) {
      if (paused) {
        pendingChunk = chunk;
        pendingPosition = position;
        return;
      }
      if (frame == null) {
        while (position < chunk.length() && sizeBytesRead < SIZE_PREFIX_BYTES) {
          frameSize = frameSize << 8 | chunk.getByte(position++) & 0xff;
          sizeBytesRead++;
        }
        if (sizeBytesRead < SIZE_PREFIX_BYTES) {
          return;
        }
        if (frameSize <= 0 || frameSize > requestMaxBytes) {
          close(
              "a request frame of "
                  + frameSize
                  + " bytes is outside 1.."
                  + requestMaxBytes
                  + " (socket.request.max.bytes)");
          return;
        }
        frame = memory.tryAllocate(frameSize);
        if (frame == null) {
          pendingChunk = chunk;
          pendingPosition = position;
          awaitMemory();
          return;
        }
        sizeBytesRead = 0;
        frameSize = 0;
      }
      int copied = Math.min(frame.remaining(), chunk.length() - position);
      chunk.getBytes(position, position + copied, frame.array(), frame.position());
      frame.position(frame.position() + copied);
      position += copied;
      if (!frame.hasRemaining()) {
        ByteBuffer request = frame.flip();
        frame = null;
        dispatch(request);
      }
    }
  }

  /** Stops reading until the request memory has room for the frame whose size was read. */
  private void awaitMemory() {
    awaitingMemory = true;
    pause();
    context.owner().setTimer(MEMORY_RETRY_MS, id -> retryAllocation());
  }

  private void retryAllocation() {
    if (closed) {
      return;
    }
    frame = memory.tryAllocate(frameSize);
    if (frame == null) {
      context.owner().setTimer(MEMORY_RETRY_MS, id -> retryAllocation());
      return;
    }
    sizeBytesRead = 0;
    frameSize = 0;
    awaitingMemory = false;
    maybeResume();
  }

  private void releaseFrame() {
    if (frame != null) {
      memory.release(frame);
      frame = null;
    }
  }

  private void dispatch(ByteBuffer request) {
    Future<Optional<Send>> response =
        processor.process(request, socket.remoteAddress().hostAddress());
    inFlight.add(response);
    response.onComplete(
        done -> {
          memory.release(request);
          writeCompleted();
        });
    if (inFlight.size() >= IN_FLIGHT_MAX) {
      pause();
    }
  }

  private void onReadFailure(Throwable e) {
    if (e instanceof IOException) {
      LOG.debug("Connection {} failed: {}", id, e.toString()); // the client went away
      closed = true;
      socket.close();
    } else {
      close("read failed: " + e);
    }
  }

  private void writeCompleted() {
    while (!closed && !inFlight.isEmpty() && inFlight.peek().isComplete()) {
      Future<Optional<Send>> head = inFlight.poll();
      if (head.failed()) {
        close("the request could not be served: " + head.cause());
        return;
      }
      Optional<Send> send = head.result();
      if (send.isPresent()) {
        try {
          writer.write(send.get());
        } catch (IOException e) {
          close("writing a response failed: " + e);
          return;
        }
      }
    }
    maybeResume();
  }

  private void pause() {
    if (!paused) {
      paused = true;
      socket.pause();
    }
  }

  private void maybeResume() {
    if (closed) {
      return;
    }
    if (socket.writeQueueFull()) {
      pause();
      return;
    }
    if (paused && !awaitingMemory && inFlight.size() < IN_FLIGHT_MAX) {
      paused = false;
      Buffer pending = pendingChunk;
      pendingChunk = null;
      if (pending != null) {
        consume(pending, pendingPosition);
      }
      if (!paused) {
        socket.resume();
      }
    }
  }

  private void close(String reason) {
    if (!closed) {
      LOG.warn("Closing connection {}: {}", id, reason);
      closed = true;
      socket.pause();
      socket.close();
    }
  }
}
