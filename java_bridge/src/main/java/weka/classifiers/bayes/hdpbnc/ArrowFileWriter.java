/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.DictionaryEncoding;
import org.apache.arrow.flatbuf.Field;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.FloatingPoint;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.Int;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.MetadataVersion;
import org.apache.arrow.flatbuf.Precision;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flatbuf.Schema;
import org.apache.arrow.flatbuf.Type;
import org.apache.arrow.flatbuf.Utf8;

import com.google.flatbuffers.FlatBufferBuilder;

import weka.core.Attribute;
import weka.core.Instances;

/**
 * Writes Weka instances as an Arrow IPC file with the flatbuffer classes of {@code arrow-format}
 * alone: a nominal attribute becomes a dictionary-encoded string column (int32 indices; the
 * dictionary holds the attribute's labels in Weka's order, unused ones included), a numeric
 * attribute a float64 column (a date its clock time in UTC, as hdp_plugin reads it from an ARFF file:
 * {@link InstanceCoder#utcMillis}); missing values are nulls. This is how hdp-bnc's Arrow reader keeps
 * a nominal attribute's declared labels ({@code hdp_plugin/data/arrow.py}), and numbers travel
 * exactly, bit for bit.
 *
 * <p>File layout: {@code ARROW1}, padding, the schema message, one dictionary batch per nominal
 * column, record batches of at most {@link #BATCH_ROWS} rows, the footer, its length, {@code ARROW1}.
 */
public final class ArrowFileWriter {

  /** Rows per record batch. */
  public static final int BATCH_ROWS = 1 << 16;

  private static final byte[] MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);

  private final Instances m_Data;
  private final boolean[] m_Nominal;
  private OutputStream m_Out;
  private long m_Pos;

  private ArrowFileWriter(Instances data) {
    m_Data = data;
    m_Nominal = new boolean[data.numAttributes()];
    for (int a = 0; a < data.numAttributes(); a++) {
      Attribute att = data.attribute(a);
      if (att.isNominal()) {
        m_Nominal[a] = true;
      } else if (!att.isNumeric()) {
        throw new IllegalArgumentException("attribute '" + att.name() + "' is " + Attribute.typeToString(att)
          + "; only nominal and numeric attributes can be written");
      }
    }
  }

  /**
   * Writes the data to a file, and forces it to the disk.
   *
   * @param data the instances (nominal and numeric attributes only)
   * @param path the file (created or replaced)
   * @throws IOException if it cannot be written
   */
  public static void write(Instances data, Path path) throws IOException {
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
      StandardOpenOption.TRUNCATE_EXISTING)) {
      OutputStream os = new java.io.BufferedOutputStream(Channels.newOutputStream(ch), 1 << 16);
      new ArrowFileWriter(data).writeTo(os);
      os.flush();
      ch.force(true);
    }
  }

  private void raw(byte[] b) throws IOException {
    m_Out.write(b);
    m_Pos += b.length;
  }

  private void pad(int to) throws IOException {
    while (m_Pos % to != 0) {
      m_Out.write(0);
      m_Pos++;
    }
  }

  private void writeTo(OutputStream out) throws IOException {
    m_Out = out;
    raw(MAGIC);
    pad(8);
    List<long[]> dictionaries = new ArrayList<>();
    List<long[]> batches = new ArrayList<>();
    // the schema message (no body)
    FlatBufferBuilder fb = new FlatBufferBuilder(1024);
    int schema = schema(fb);
    message(fb, MessageHeader.Schema, schema, 0);
    writeMessage(fb, new Body());
    // one dictionary per nominal column: its labels
    for (int a = 0; a < m_Nominal.length; a++) {
      if (m_Nominal[a]) {
        dictionaries.add(writeDictionary(a));
      }
    }
    int n = m_Data.numInstances();
    int start = 0;
    do { // one batch at least, empty for no rows
      batches.add(writeBatch(start, Math.min(n, start + BATCH_ROWS)));
      start += BATCH_ROWS;
    } while (start < n);
    // the footer
    FlatBufferBuilder f = new FlatBufferBuilder(1024);
    int fs = schema(f);
    Footer.startDictionariesVector(f, dictionaries.size());
    int dv = blocks(f, dictionaries);
    Footer.startRecordBatchesVector(f, batches.size());
    int bv = blocks(f, batches);
    Footer.startFooter(f);
    Footer.addVersion(f, MetadataVersion.V5);
    Footer.addSchema(f, fs);
    Footer.addDictionaries(f, dv);
    Footer.addRecordBatches(f, bv);
    f.finish(Footer.endFooter(f));
    byte[] footer = f.sizedByteArray();
    raw(footer);
    raw(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(footer.length).array());
    raw(MAGIC);
  }

  /** Ends a started vector of Block structs (offset, metadata length, body length), written back to front. */
  private static int blocks(FlatBufferBuilder f, List<long[]> blocks) {
    for (int i = blocks.size() - 1; i >= 0; i--) {
      long[] b = blocks.get(i);
      Block.createBlock(f, b[0], (int) b[1], b[2]);
    }
    return f.endVector();
  }

  private int schema(FlatBufferBuilder fb) {
    int[] fields = new int[m_Nominal.length];
    for (int a = 0; a < m_Nominal.length; a++) {
      int name = fb.createString(m_Data.attribute(a).name());
      int type;
      int dict = 0;
      byte typeType;
      if (m_Nominal[a]) {
        Utf8.startUtf8(fb);
        type = Utf8.endUtf8(fb);
        typeType = Type.Utf8;
        int index = Int.createInt(fb, 32, true);
        DictionaryEncoding.startDictionaryEncoding(fb);
        DictionaryEncoding.addId(fb, a);
        DictionaryEncoding.addIndexType(fb, index);
        DictionaryEncoding.addIsOrdered(fb, false);
        dict = DictionaryEncoding.endDictionaryEncoding(fb);
      } else {
        type = FloatingPoint.createFloatingPoint(fb, Precision.DOUBLE);
        typeType = Type.FloatingPoint;
      }
      int children = Field.createChildrenVector(fb, new int[0]);
      Field.startField(fb);
      Field.addName(fb, name);
      Field.addNullable(fb, true);
      Field.addTypeType(fb, typeType);
      Field.addType(fb, type);
      if (m_Nominal[a]) {
        Field.addDictionary(fb, dict);
      }
      Field.addChildren(fb, children);
      fields[a] = Field.endField(fb);
    }
    int fv = Schema.createFieldsVector(fb, fields);
    Schema.startSchema(fb);
    Schema.addFields(fb, fv);
    return Schema.endSchema(fb);
  }

  private static void message(FlatBufferBuilder fb, byte headerType, int header, long bodyLength) {
    Message.startMessage(fb);
    Message.addVersion(fb, MetadataVersion.V5);
    Message.addHeaderType(fb, headerType);
    Message.addHeader(fb, header);
    Message.addBodyLength(fb, bodyLength);
    fb.finish(Message.endMessage(fb));
  }

  /** The buffers of one message body, each padded to 8 bytes. */
  private static final class Body {
    final List<byte[]> buffers = new ArrayList<>();
    final List<long[]> nodes = new ArrayList<>(); // length, null count

    void add(byte[] b) {
      buffers.add(b);
    }

    long length() {
      long n = 0;
      for (byte[] b : buffers) {
        n += (b.length + 7) & ~7L;
      }
      return n;
    }

    int buffersVector(FlatBufferBuilder fb) {
      RecordBatch.startBuffersVector(fb, buffers.size());
      long off = length(); // back to front: each buffer starts where the next one's padded bytes end
      for (int i = buffers.size() - 1; i >= 0; i--) {
        off -= (buffers.get(i).length + 7) & ~7L;
        Buffer.createBuffer(fb, off, buffers.get(i).length);
      }
      return fb.endVector();
    }

    int nodesVector(FlatBufferBuilder fb) {
      RecordBatch.startNodesVector(fb, nodes.size());
      for (int i = nodes.size() - 1; i >= 0; i--) {
        FieldNode.createFieldNode(fb, nodes.get(i)[0], nodes.get(i)[1]);
      }
      return fb.endVector();
    }
  }

  /** Writes an encapsulated message and its body; returns its block (offset, metadata length, body length). */
  private long[] writeMessage(FlatBufferBuilder fb, Body body) throws IOException {
    byte[] meta = fb.sizedByteArray();
    long offset = m_Pos;
    int padded = (int) (((8 + meta.length + 7) & ~7L) - 8);
    ByteBuffer prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    prefix.putInt(0xFFFFFFFF).putInt(padded);
    raw(prefix.array());
    raw(meta);
    pad(8);
    long bodyStart = m_Pos;
    for (byte[] b : body.buffers) {
      raw(b);
      pad(8);
    }
    return new long[] {offset, 8 + padded, m_Pos - bodyStart};
  }

  private static int recordBatch(FlatBufferBuilder fb, long length, Body body) {
    int nodes = body.nodesVector(fb);
    int buffers = body.buffersVector(fb);
    RecordBatch.startRecordBatch(fb);
    RecordBatch.addLength(fb, length);
    RecordBatch.addNodes(fb, nodes);
    RecordBatch.addBuffers(fb, buffers);
    return RecordBatch.endRecordBatch(fb);
  }

  private long[] writeDictionary(int a) throws IOException {
    Attribute att = m_Data.attribute(a);
    int n = att.numValues();
    byte[][] labels = new byte[n][];
    int total = 0;
    for (int v = 0; v < n; v++) {
      labels[v] = att.value(v).getBytes(StandardCharsets.UTF_8);
      total += labels[v].length;
    }
    ByteBuffer offsets = ByteBuffer.allocate(4 * (n + 1)).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer chars = ByteBuffer.allocate(total);
    offsets.putInt(0);
    for (byte[] l : labels) {
      chars.put(l);
      offsets.putInt(chars.position());
    }
    Body body = new Body();
    body.nodes.add(new long[] {n, 0});
    body.add(new byte[0]);
    body.add(offsets.array());
    body.add(chars.array());
    FlatBufferBuilder fb = new FlatBufferBuilder(256);
    int rb = recordBatch(fb, n, body);
    int db = DictionaryBatch.createDictionaryBatch(fb, a, rb, false);
    message(fb, MessageHeader.DictionaryBatch, db, body.length());
    return writeMessage(fb, body);
  }

  private long[] writeBatch(int from, int to) throws IOException {
    int n = to - from;
    Body body = new Body();
    for (int a = 0; a < m_Nominal.length; a++) {
      byte[] validity = new byte[(n + 7) / 8];
      int nulls = 0;
      ByteBuffer values = ByteBuffer.allocate((m_Nominal[a] ? 4 : 8) * n).order(ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < n; i++) {
        double v = InstanceCoder.utcMillis(m_Data.attribute(a), m_Data.instance(from + i).value(a)); // dates as UTC
        boolean missing = Double.isNaN(v); // Weka's missing value
        if (missing) {
          nulls++;
        } else {
          validity[i >>> 3] |= (byte) (1 << (i & 7));
        }
        if (m_Nominal[a]) {
          values.putInt(missing ? 0 : (int) v);
        } else {
          values.putDouble(missing ? 0.0 : v);
        }
      }
      body.nodes.add(new long[] {n, nulls});
      body.add(nulls == 0 ? new byte[0] : validity);
      body.add(values.array());
    }
    FlatBufferBuilder fb = new FlatBufferBuilder(1024);
    int rb = recordBatch(fb, n, body);
    message(fb, MessageHeader.RecordBatch, rb, body.length());
    return writeMessage(fb, body);
  }
}
