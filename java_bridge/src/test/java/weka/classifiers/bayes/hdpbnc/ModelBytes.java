package weka.classifiers.bayes.hdpbnc;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.RecordBatch;

/**
 * Edits of a model file's bytes for tests: where each buffer of a record batch lies in the file, values
 * written into the node table in place, and the checksum recomputed over the edited file, so that an
 * edit is the file's only fault.
 */
final class ModelBytes {

  /** The node table's buffers, in the order of a record batch (docs/model-format.md section 2). */
  static final int BRANCH = 1;
  static final int CHILDREN = 3;
  static final int LOG_BACKOFF = 5;
  static final int OFFSETS = 7;
  static final int VALUE = 10;
  static final int LOG_PROB = 12;

  private ModelBytes() {
  }

  /** Per buffer of record batch {@code batch}: its start in the file and its length. */
  static long[][] buffers(byte[] file, int batch) {
    ByteBuffer bb = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
    int footerLength = bb.getInt(file.length - 10);
    Footer footer = Footer.getRootAsFooter(slice(bb, file.length - 10 - footerLength, footerLength));
    Block block = footer.recordBatches(new Block(), batch);
    int at = (int) block.offset();
    int skip = bb.getInt(at) == -1 ? 8 : 4;
    int length = bb.getInt(at + skip - 4);
    Message m = Message.getRootAsMessage(slice(bb, at + skip, length));
    RecordBatch rb = (RecordBatch) m.header(new RecordBatch());
    long body = block.offset() + block.metaDataLength();
    long[][] out = new long[rb.buffersLength()][];
    for (int i = 0; i < out.length; i++) {
      org.apache.arrow.flatbuf.Buffer b = rb.buffers(new org.apache.arrow.flatbuf.Buffer(), i);
      out[i] = new long[] {body + b.offset(), b.length()};
    }
    return out;
  }

  private static ByteBuffer slice(ByteBuffer bb, int at, int length) {
    ByteBuffer d = bb.duplicate();
    d.position(at);
    d.limit(at + length);
    return d.slice().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Whether the file's index columns are int32 (else uint16). */
  static boolean wide(byte[] file) throws Exception {
    return new ArrowFileReader(file).fields().get(0).type == ArrowFileReader.ColumnType.INT32;
  }

  /** Bytes per value of a buffer of the node table. */
  static int width(byte[] file, int buffer) throws Exception {
    return buffer == LOG_BACKOFF || buffer == LOG_PROB ? 8 : buffer == OFFSETS || wide(file) ? 4 : 2;
  }

  /** The number of values of a buffer of the node table in record batch {@code batch}. */
  static int count(byte[] file, int batch, int buffer) throws Exception {
    return (int) (buffers(file, batch)[buffer][1] / width(file, buffer));
  }

  /** Writes an integer (uint16, or int32) at value {@code i} of an integer buffer. */
  static void setInt(byte[] file, int batch, int buffer, int i, int value) throws Exception {
    ByteBuffer bb = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
    int w = width(file, buffer);
    int at = (int) buffers(file, batch)[buffer][0] + w * i;
    if (w == 2) {
      bb.putShort(at, (short) value);
    } else {
      bb.putInt(at, value);
    }
  }

  /** Reads value {@code i} of an integer buffer. */
  static int getInt(byte[] file, int batch, int buffer, int i) throws Exception {
    ByteBuffer bb = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
    int w = width(file, buffer);
    int at = (int) buffers(file, batch)[buffer][0] + w * i;
    return w == 2 ? bb.getShort(at) & 0xFFFF : bb.getInt(at);
  }

  /** Writes a double at value {@code i} of a float64 buffer. */
  static void setDouble(byte[] file, int batch, int buffer, int i, double value) {
    ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN).putDouble((int) buffers(file, batch)[buffer][0] + 8 * i,
      value);
  }

  /** Reads value {@code i} of a float64 buffer. */
  static double getDouble(byte[] file, int batch, int buffer, int i) {
    return ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN).getDouble((int) buffers(file, batch)[buffer][0]
      + 8 * i);
  }

  /**
   * The file with its checksum recomputed over its (possibly edited) documents and columns; a file whose
   * record batches the Arrow reader refuses, or without its documents, is returned as it is (its checksum
   * is never read).
   */
  static byte[] withChecksum(byte[] data) throws Exception {
    ArrowFileReader r = new ArrowFileReader(data);
    Map<String, byte[]> meta = r.metadata();
    if (!meta.containsKey(ModelFile.MODEL_KEY) || !meta.containsKey(ModelFile.CHECKSUM_KEY)) {
      return data;
    }
    List<List<ArrowFileReader.Column>> batches = new ArrayList<>();
    try {
      for (int i = 0; i < r.numBatches(); i++) {
        batches.add(r.readBatch(i, true));
      }
    } catch (java.io.IOException e) {
      return data;
    }
    byte[] training = meta.containsKey(ModelFile.TRAINING_KEY) ? meta.get(ModelFile.TRAINING_KEY) : "{}".getBytes(
      StandardCharsets.UTF_8);
    String fresh = ModelFile.digest(meta.get(ModelFile.MODEL_KEY), training, batches);
    String old = new String(meta.get(ModelFile.CHECKSUM_KEY), StandardCharsets.US_ASCII);
    return new String(data, StandardCharsets.ISO_8859_1).replace(old, fresh).getBytes(StandardCharsets.ISO_8859_1);
  }

  /**
   * The file with {@code from} replaced by {@code to} (same length) in its model document, at the first,
   * the last or every place, and its checksum recomputed; the file holds the document twice (in the
   * schema message and in the footer), and both copies change.
   */
  static byte[] editDocument(byte[] file, String from, String to, String at) throws Exception {
    String s = new String(file, StandardCharsets.ISO_8859_1);
    String doc = new String(new ArrowFileReader(file).metadata().get(ModelFile.MODEL_KEY),
      StandardCharsets.ISO_8859_1);
    if (from.length() != to.length() || !doc.contains(from)) {
      throw new IllegalArgumentException(from);
    }
    String changed;
    if (at.equals("all")) {
      changed = doc.replace(from, to);
    } else {
      int i = at.equals("first") ? doc.indexOf(from) : doc.lastIndexOf(from);
      changed = doc.substring(0, i) + to + doc.substring(i + from.length());
    }
    return withChecksum(s.replace(doc, changed).getBytes(StandardCharsets.ISO_8859_1));
  }
}
